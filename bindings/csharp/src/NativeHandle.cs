// TiledMM.NativeHandle: the tmm_handle of an Engine, as a SafeHandle. The P/Invoke
// marshaller keeps it alive (and undestroyed) for the length of every call it is
// passed to, so an Engine that becomes unreachable during a call is not released
// under it; when both are unreachable, the runtime's critical finalizer calls
// ReleaseHandle, which destroys the native handle exactly once.
using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

// The tests (EngineTests.exe) read the counters below.
[assembly: InternalsVisibleTo("EngineTests")]

namespace TiledMM
{
    internal sealed class NativeHandle : SafeHandle
    {
        private static long created, destroyed;

        /// <summary>Stands for "no handle" in tmm_get_error_message(NULL).</summary>
        internal static readonly NativeHandle Null = new NativeHandle(false);

        /// <summary>An empty handle, made before tmm_create so that adopting the
        /// result cannot fail.</summary>
        internal NativeHandle() : base(IntPtr.Zero, true) { }

        private NativeHandle(bool ownsHandle) : base(IntPtr.Zero, ownsHandle) { }

        public override bool IsInvalid => handle == IntPtr.Zero;

        /// <summary>Takes ownership of a handle tmm_create returned.</summary>
        internal void Adopt(SWIGTYPE_p_tmm_context_s pointer)
        {
            SetHandle(SWIGTYPE_p_tmm_context_s.getCPtr(pointer).Handle);
            Interlocked.Increment(ref created);
        }

        protected override bool ReleaseHandle()
        {
            TiledMMNative.tmmb_destroy(handle);
            Interlocked.Increment(ref destroyed);
            return true;
        }

        /// <summary>Native handles created so far (for the tests).</summary>
        internal static long Created => Interlocked.Read(ref created);

        /// <summary>Native handles destroyed so far, by Dispose or by the finalizer.</summary>
        internal static long Destroyed => Interlocked.Read(ref destroyed);
    }
}
