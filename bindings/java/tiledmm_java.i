/* tiledmm_java.i: the Java half of the SWIG interface.
 *
 * Generated classes land in package org.tiledmm, package-private, so users see only
 * the idiomatic API (Tiledmm, its enums and exceptions). Arrays cross JNI without a
 * copy: float[] through GetPrimitiveArrayCritical, direct FloatBuffers through
 * GetDirectBufferAddress. The Java layer checks every length before it calls here.
 */
%module TiledmmNative

%include "enumtypeunsafe.swg"
%javaconst(1);

%pragma(java) jniclassclassmodifiers = "final class"
%pragma(java) moduleclassmodifiers = "final class"
%pragma(java) jniclassimports = ""
%typemap(javaclassmodifiers) SWIGTYPE, SWIGTYPE *, SWIGTYPE &, enum SWIGTYPE "final class"

/* float[] parameters of tmmb_sgemm: pinned (or copied by the JVM if it must) for
 * the duration of the call only; inputs are released without write-back. */
%typemap(jni) const float* array_a, const float* array_b, float* array_c "jfloatArray"
%typemap(jtype) const float* array_a, const float* array_b, float* array_c "float[]"
%typemap(jstype) const float* array_a, const float* array_b, float* array_c "float[]"
%typemap(javain) const float* array_a, const float* array_b, float* array_c "$javainput"
%typemap(in) const float* array_a, const float* array_b, float* array_c {
  $1 = $input ? (float*)JCALL2(GetPrimitiveArrayCritical, jenv, $input, NULL) : NULL;
}
%typemap(freearg) const float* array_a, const float* array_b {
  if ($1) JCALL3(ReleasePrimitiveArrayCritical, jenv, $input, (void*)$1, JNI_ABORT);
}
%typemap(freearg) float* array_c {
  if ($1) JCALL3(ReleasePrimitiveArrayCritical, jenv, $input, (void*)$1, 0);
}

/* Direct FloatBuffer parameters of tmmb_sgemm_direct. */
%typemap(jni) const float* direct_a, const float* direct_b, float* direct_c "jobject"
%typemap(jtype) const float* direct_a, const float* direct_b, float* direct_c "java.nio.FloatBuffer"
%typemap(jstype) const float* direct_a, const float* direct_b, float* direct_c "java.nio.FloatBuffer"
%typemap(javain) const float* direct_a, const float* direct_b, float* direct_c "$javainput"
%typemap(in) const float* direct_a, const float* direct_b, float* direct_c {
  $1 = $input ? (float*)JCALL1(GetDirectBufferAddress, jenv, $input) : NULL;
}

%include "../tiledmm.i"

%rename("%s") tmmb_sgemm_direct;
%inline %{
static tmm_status tmmb_sgemm_direct(tmm_handle h, int layout, int trans_a, int trans_b,
                                    int64_t m, int64_t n, int64_t k, float alpha,
                                    const float* direct_a, int64_t offset_a, int64_t lda,
                                    const float* direct_b, int64_t offset_b, int64_t ldb,
                                    float beta, float* direct_c, int64_t offset_c, int64_t ldc) {
  return tmmb_sgemm(h, layout, trans_a, trans_b, m, n, k, alpha, direct_a, offset_a, lda,
                    direct_b, offset_b, ldb, beta, direct_c, offset_c, ldc);
}
%}
