/* tiledmm_csharp.i: the C# half of the SWIG interface.
 *
 * Naming rule of the public C# API (namespace TiledMM): the .NET Framework Design
 * Guidelines. Types, properties, methods and enum members are PascalCase; the
 * product's two-letter acronym stays upper case wherever it appears (TiledMM,
 * TiledMMException); a value is a property (Backend, TileSize, LastTiming, Version),
 * an action a method (Sgemm, Dgemm, Synchronize, Dispose). The handle is Engine, as in
 * Java.
 * The 1.0 name that broke the rule (TiledmmException) stays, [Obsolete], for the 1.x
 * series: TiledMMException derives from it, so that 1.0 catch clauses still catch.
 *
 * Generated classes are internal to the TiledMM assembly, so users see only the
 * idiomatic API. float[] and double[] parameters (Sgemm, Dgemm) are blittable: the
 * P/Invoke marshaller pins them for the call, it does not copy (a pinned .NET array
 * does not hold up the collector the way a JNI critical section does). The native handle crosses P/Invoke as a
 * NativeHandle (a SafeHandle): the marshaller keeps it alive for each call, and its
 * ReleaseHandle destroys it through tmmb_destroy. The C# layer checks every length
 * before it calls here. P/Invoke targets the unversioned wrapper library,
 * libtiledmm_csharp.so.
 */
%module TiledMMNative

%include "enumsimple.swg"
%include "arrays_csharp.i"
%apply float INPUT[] { const float* array_a, const float* array_b }
%apply float INOUT[] { float* array_c }
%apply double INPUT[] { const double* array_a, const double* array_b }
%apply double INOUT[] { double* array_c }

%pragma(csharp) moduleclassmodifiers = "internal class"
%pragma(csharp) imclassclassmodifiers = "internal class"
%typemap(csclassmodifiers) SWIGTYPE, SWIGTYPE *, SWIGTYPE &, enum SWIGTYPE "internal class"

/* Every `tmm_handle handle` parameter takes the SafeHandle. (The handle returned by
 * tmmb_handle_cell_value stays a plain pointer: Engine hands it to a NativeHandle.) */
%typemap(imtype) tmm_handle handle "NativeHandle"
%typemap(cstype) tmm_handle handle "NativeHandle"
%typemap(csin) tmm_handle handle "$csinput"

/* tmmb_destroy takes the raw pointer: ReleaseHandle runs when the SafeHandle is
 * already closed, so it cannot pass itself. */
%typemap(imtype) void* raw_handle "global::System.IntPtr"
%typemap(cstype) void* raw_handle "global::System.IntPtr"
%typemap(csin) void* raw_handle "$csinput"

/* C#'s own entries in the whitelist (tiledmm.i has the shared ones). */
%rename("%s") tmmb_sgemm;
%rename("%s") tmmb_dgemm;
%rename("%s") tmmb_sgemm_strided_batched;
%rename("%s") tmmb_dgemm_strided_batched;
%rename("%s") tmmb_destroy;

%include "../tiledmm.i"

%inline %{
/* tmm_destroy for NativeHandle.ReleaseHandle. */
static void tmmb_destroy(void* raw_handle) {
  tmm_destroy((tmm_handle)raw_handle);
}
%}
