/* tiledmm_csharp.i: the C# half of the SWIG interface.
 *
 * Generated classes are internal to the TiledMM assembly, so users see only the
 * idiomatic API (Engine, its enums and exceptions). float[] parameters are
 * blittable: the P/Invoke marshaller pins them for the call, it does not copy. The
 * C# layer checks every length before it calls here. P/Invoke targets the
 * unversioned wrapper library, libtiledmm_csharp.so.
 */
%module TiledmmNative

%include "enumsimple.swg"
%include "arrays_csharp.i"
%apply float INPUT[] { const float* array_a, const float* array_b }
%apply float INOUT[] { float* array_c }

%pragma(csharp) moduleclassmodifiers = "internal class"
%pragma(csharp) imclassclassmodifiers = "internal class"
%typemap(csclassmodifiers) SWIGTYPE, SWIGTYPE *, SWIGTYPE &, enum SWIGTYPE "internal class"

%include "../tiledmm.i"
