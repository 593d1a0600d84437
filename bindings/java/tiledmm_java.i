/* tiledmm_java.i: the Java half of the SWIG interface.
 *
 * Naming rule of the public Java API (package org.tiledmm): JavaBeans. Types are
 * UpperCamelCase with "Tiledmm" as one word (Engine, TiledmmException); a property is
 * getX()/setX(), static ones included (Engine.getVersion()); actions are
 * lowerCamelCase verbs (sgemm, dgemm, synchronize, close); enum constants are
 * UPPER_SNAKE_CASE. The 1.0 names that broke it (class Tiledmm, backend(), lastTime(),
 * lastTiming(), deviceInfo(), version(), bindingVersion(), status(), the public
 * fields of Timing and DeviceInfo) stay as @Deprecated aliases for the 1.x series.
 *
 * Generated classes land in package org.tiledmm, package-private, so users see only
 * the idiomatic API. The library works on two kinds of memory, in float (sgemm) and
 * double (dgemm): direct FloatBuffers and DoubleBuffers (native order, checked in
 * Java), in place through GetDirectBufferAddress; and float[] and double[] arrays,
 * which it reads and writes through tmm_sgemm_io's and tmm_dgemm_io's functions
 * (below), in pieces, with Get/SetFloatArrayRegion and Get/SetDoubleArrayRegion. No
 * array is ever pinned (no GetPrimitiveArrayCritical) while the library works. The
 * Java layer checks every length and offset before it calls here.
 */
%module TiledmmNative

%include "enumtypeunsafe.swg"
%javaconst(1);

%pragma(java) jniclassclassmodifiers = "final class"
%pragma(java) moduleclassmodifiers = "final class"
%pragma(java) jniclassimports = ""
%typemap(javaclassmodifiers) SWIGTYPE, SWIGTYPE *, SWIGTYPE &, enum SWIGTYPE "final class"

/* Direct FloatBuffer / DoubleBuffer parameters of tmmb_sgemm_direct and
 * tmmb_dgemm_direct, and float[] / double[] parameters of tmmb_sgemm_arrays and
 * tmmb_dgemm_arrays. The arrays are passed through as references, never pinned: the
 * library's threads copy them with Get/Set<Type>ArrayRegion. */
%define TMMB_JAVA_MEMORY(TYPE, ARRAY, JAVA_ARRAY, JAVA_BUFFER)
%typemap(jni) const TYPE* direct_a, const TYPE* direct_b, TYPE* direct_c "jobject"
%typemap(jtype) const TYPE* direct_a, const TYPE* direct_b, TYPE* direct_c JAVA_BUFFER
%typemap(jstype) const TYPE* direct_a, const TYPE* direct_b, TYPE* direct_c JAVA_BUFFER
%typemap(javain) const TYPE* direct_a, const TYPE* direct_b, TYPE* direct_c "$javainput"
%typemap(in) const TYPE* direct_a, const TYPE* direct_b, TYPE* direct_c {
  $1 = $input ? (TYPE*)JCALL1(GetDirectBufferAddress, jenv, $input) : NULL;
}
%typemap(jni) ARRAY #ARRAY
%typemap(jtype) ARRAY JAVA_ARRAY
%typemap(jstype) ARRAY JAVA_ARRAY
%typemap(javain) ARRAY "$javainput"
%typemap(in) ARRAY %{ $1 = $input; %}
%enddef
TMMB_JAVA_MEMORY(float, jfloatArray, "float[]", "java.nio.FloatBuffer")
TMMB_JAVA_MEMORY(double, jdoubleArray, "double[]", "java.nio.DoubleBuffer")
%typemap(in, numinputs=0) JNIEnv* jenv %{ $1 = jenv; %}

/* Java's own entries in the whitelist (tiledmm.i has the shared ones). */
%rename("%s") tmm_destroy;
%rename("%s") tmmb_sgemm_direct;
%rename("%s") tmmb_dgemm_direct;
%rename("%s") tmmb_sgemm_strided_batched_direct;
%rename("%s") tmmb_dgemm_strided_batched_direct;
%rename("%s") tmmb_sgemm_arrays;
%rename("%s") tmmb_dgemm_arrays;
%rename("%s") TMMB_NO_MEMORY;
%rename("%s") TMMB_COPY_CHUNK;

%include "../tiledmm.i"

/* tmm_sgemm / tmm_dgemm on direct FloatBuffers / DoubleBuffers, each starting at its
 * element offset (tmmb_sgemm and tmmb_dgemm are in tiledmm.i). */
%define TMMB_GEMM_DIRECT(S, TYPE)
%inline %{
static tmm_status tmmb_##S##gemm_direct(tmm_handle handle, int layout, int trans_a,
                                        int trans_b, int64_t m, int64_t n, int64_t k,
                                        TYPE alpha, const TYPE* direct_a, int64_t offset_a,
                                        int64_t lda, const TYPE* direct_b, int64_t offset_b,
                                        int64_t ldb, TYPE beta, TYPE* direct_c,
                                        int64_t offset_c, int64_t ldc) {
  return tmmb_##S##gemm(handle, layout, trans_a, trans_b, m, n, k, alpha, direct_a, offset_a,
                        lda, direct_b, offset_b, ldb, beta, direct_c, offset_c, ldc);
}
%}
%enddef
TMMB_GEMM_DIRECT(s, float)
TMMB_GEMM_DIRECT(d, double)

/* The strided batched calls on direct buffers, each matrix's first product at its
 * element offset. */
%define TMMB_GEMM_STRIDED_BATCHED_DIRECT(S, TYPE)
%inline %{
static tmm_status tmmb_##S##gemm_strided_batched_direct(
    tmm_handle handle, int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
    TYPE alpha, const TYPE* direct_a, int64_t offset_a, int64_t lda, int64_t stride_a,
    const TYPE* direct_b, int64_t offset_b, int64_t ldb, int64_t stride_b, TYPE beta,
    TYPE* direct_c, int64_t offset_c, int64_t ldc, int64_t stride_c, int64_t batch) {
  return tmmb_##S##gemm_strided_batched(handle, layout, trans_a, trans_b, m, n, k, alpha,
                                        direct_a, offset_a, lda, stride_a, direct_b, offset_b,
                                        ldb, stride_b, beta, direct_c, offset_c, ldc, stride_c,
                                        batch);
}
%}
%enddef
TMMB_GEMM_STRIDED_BATCHED_DIRECT(s, float)
TMMB_GEMM_STRIDED_BATCHED_DIRECT(d, double)

/* ------------------------------------------------------------------------------ *
 * float[] and double[] arrays through tmm_sgemm_io / tmm_dgemm_io: the one place
 * where the Java binding copies.
 *
 * JNI forbids holding an array (GetPrimitiveArrayCritical) across a long native
 * section: it stalls the garbage collector in every thread. So the library reads
 * A, B (and C when beta != 0) and writes C's m x n part (never its padding: another
 * thread may own it) through the functions below, which copy with
 * Get/Set<Type>ArrayRegion in pieces of at most TMMB_COPY_CHUNK elements. On CUDA's
 * streamed path these copies are the packing step itself, done by the library's
 * packing threads into its pinned staging while the GPU works (one pass over each
 * array, overlapped); elsewhere the library reads whole operands into memory of its
 * own first. The library's threads attach to the JVM as daemons on their first copy
 * and detach when they end. Each array is held by a global reference for the call.
 * Everything but the element type is shared by the two precisions: tmmb_hold,
 * tmmb_release and tmmb_copy; TMMB_GEMM_ARRAYS writes the typed rest.
 * ------------------------------------------------------------------------------ */
%inline %{
/* Returned by tmmb_sgemm_arrays and tmmb_dgemm_arrays when the JVM has no memory for
 * a global reference. */
#define TMMB_NO_MEMORY (-1)
/* The most elements one Get/Set<Type>ArrayRegion call copies (256 KiB of floats,
 * 512 KiB of doubles). */
#define TMMB_COPY_CHUNK 65536

static int tmmb_sgemm_arrays(JNIEnv* jenv, tmm_handle handle, int layout, int trans_a,
                             int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                             jfloatArray array_a, int64_t offset_a, int64_t lda,
                             jfloatArray array_b, int64_t offset_b, int64_t ldb, float beta,
                             jfloatArray array_c, int64_t offset_c, int64_t ldc);
static int tmmb_dgemm_arrays(JNIEnv* jenv, tmm_handle handle, int layout, int trans_a,
                             int trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                             jdoubleArray array_a, int64_t offset_a, int64_t lda,
                             jdoubleArray array_b, int64_t offset_b, int64_t ldb, double beta,
                             jdoubleArray array_c, int64_t offset_c, int64_t ldc);
%}

%{
#include <pthread.h>

static JavaVM* tmmb_vm;
static pthread_key_t tmmb_attached; /* set in threads this binding attached */
static pthread_once_t tmmb_once = PTHREAD_ONCE_INIT;

/* Runs when a thread the binding attached ends. */
static void tmmb_detach(void* unused) {
  (void)unused;
  (*tmmb_vm)->DetachCurrentThread(tmmb_vm);
}

static void tmmb_init(void) { pthread_key_create(&tmmb_attached, tmmb_detach); }

/* The calling thread's JNIEnv: the Java caller's own, or, for one of the library's
 * threads, an attachment as a daemon (it does not keep the JVM alive), kept until the
 * thread ends. NULL if the thread cannot be attached. */
static JNIEnv* tmmb_env(void) {
  JNIEnv* env = NULL;
  jint rc = (*tmmb_vm)->GetEnv(tmmb_vm, (void**)&env, JNI_VERSION_1_6);
  if (rc == JNI_OK) return env;
  if (rc != JNI_EDETACHED) return NULL;
  if ((*tmmb_vm)->AttachCurrentThreadAsDaemon(tmmb_vm, (void**)&env, NULL) != JNI_OK) return NULL;
  pthread_setspecific(tmmb_attached, (void*)1);
  return env;
}

/* One float[] or double[] matrix: a global reference (usable from any thread), the
 * offset of its first element, and its element type. */
typedef struct tmmb_array {
  jarray array;
  int64_t offset;
  int is_double;
} tmmb_array;

/* Global references to the call's arrays (NULL for an array not given) in `arrays`:
 * 0, or TMM_ERROR_INTERNAL / TMMB_NO_MEMORY with none held. */
static int tmmb_hold(JNIEnv* jenv, int is_double, jarray given_a, int64_t offset_a,
                     jarray given_b, int64_t offset_b, jarray given_c, int64_t offset_c,
                     tmmb_array arrays[3]) {
  if (!tmmb_vm && (*jenv)->GetJavaVM(jenv, &tmmb_vm) != 0) return TMM_ERROR_INTERNAL;
  pthread_once(&tmmb_once, tmmb_init);
  jarray given[3] = {given_a, given_b, given_c};
  const int64_t offsets[3] = {offset_a, offset_b, offset_c};
  int status = 0;
  for (int i = 0; i < 3; i++) {
    arrays[i].array = NULL;
    arrays[i].offset = offsets[i];
    arrays[i].is_double = is_double;
    if (given[i] && status == 0) {
      arrays[i].array = (jarray)(*jenv)->NewGlobalRef(jenv, given[i]);
      if (!arrays[i].array) {
        (*jenv)->ExceptionClear(jenv);
        status = TMMB_NO_MEMORY;
      }
    }
  }
  if (status != 0) {
    for (int i = 0; i < 3; i++)
      if (arrays[i].array) (*jenv)->DeleteGlobalRef(jenv, arrays[i].array);
  }
  return status;
}

static void tmmb_release(JNIEnv* jenv, tmmb_array arrays[3]) {
  for (int i = 0; i < 3; i++)
    if (arrays[i].array) (*jenv)->DeleteGlobalRef(jenv, arrays[i].array);
}

/* count elements between the array, from `offset` past the matrix's first element,
 * and `buffer`, in pieces. The Java layer has checked that they lie inside the array,
 * so a failure (non-zero) means the JVM could not attach the thread or raised. */
static int tmmb_copy(void* user, int64_t offset, int64_t count, void* buffer, int to_array) {
  const tmmb_array* a = (const tmmb_array*)user;
  JNIEnv* env = tmmb_env();
  if (!env) return 1;
  const size_t size = a->is_double ? sizeof(jdouble) : sizeof(jfloat);
  for (int64_t done = 0; done < count; done += TMMB_COPY_CHUNK) {
    int64_t left = count - done;
    jsize len = (jsize)(left < TMMB_COPY_CHUNK ? left : TMMB_COPY_CHUNK);
    jsize start = (jsize)(a->offset + offset + done);
    void* at = (char*)buffer + (size_t)done * size;
    if (a->is_double && to_array)
      (*env)->SetDoubleArrayRegion(env, (jdoubleArray)a->array, start, len, (const jdouble*)at);
    else if (a->is_double)
      (*env)->GetDoubleArrayRegion(env, (jdoubleArray)a->array, start, len, (jdouble*)at);
    else if (to_array)
      (*env)->SetFloatArrayRegion(env, (jfloatArray)a->array, start, len, (const jfloat*)at);
    else
      (*env)->GetFloatArrayRegion(env, (jfloatArray)a->array, start, len, (jfloat*)at);
    if ((*env)->ExceptionCheck(env)) {
      (*env)->ExceptionClear(env);
      return 2;
    }
  }
  return 0;
}

/* The typed rest of tmmb_sgemm_arrays (S = s, TYPE = float, IO = tmm_host_io) and
 * tmmb_dgemm_arrays (d, double, tmm_host_io_double): the io functions over tmmb_copy,
 * and the call. */
#define TMMB_GEMM_ARRAYS(S, TYPE, IO, IS_DOUBLE)                                                \
  static int tmmb_read_##TYPE(void* user, int64_t offset, int64_t count, TYPE* dst) {           \
    return tmmb_copy(user, offset, count, dst, 0);                                               \
  }                                                                                              \
  static int tmmb_write_##TYPE(void* user, int64_t offset, int64_t count, const TYPE* src) {    \
    return tmmb_copy(user, offset, count, (TYPE*)src, 1);                                        \
  }                                                                                              \
  static int tmmb_##S##gemm_arrays(JNIEnv* jenv, tmm_handle handle, int layout, int trans_a,    \
                                   int trans_b, int64_t m, int64_t n, int64_t k, TYPE alpha,    \
                                   j##TYPE##Array array_a, int64_t offset_a, int64_t lda,       \
                                   j##TYPE##Array array_b, int64_t offset_b, int64_t ldb,       \
                                   TYPE beta, j##TYPE##Array array_c, int64_t offset_c,         \
                                   int64_t ldc) {                                               \
    tmmb_array arrays[3];                                                                        \
    int status = tmmb_hold(jenv, IS_DOUBLE, array_a, offset_a, array_b, offset_b, array_c,      \
                           offset_c, arrays);                                                    \
    if (status != 0) return status;                                                              \
    IO io[3];                                                                                    \
    for (int i = 0; i < 3; i++) {                                                                \
      io[i].struct_size = sizeof io[i];                                                          \
      io[i].read = tmmb_read_##TYPE;                                                             \
      io[i].write = i == 2 ? tmmb_write_##TYPE : NULL;                                           \
      io[i].user = &arrays[i];                                                                   \
    }                                                                                            \
    status = tmm_##S##gemm_io(handle, (tmm_layout)layout, (tmm_transpose)trans_a,               \
                              (tmm_transpose)trans_b, m, n, k, alpha, array_a ? &io[0] : NULL,  \
                              lda, array_b ? &io[1] : NULL, ldb, beta,                           \
                              array_c ? &io[2] : NULL, ldc);                                     \
    tmmb_release(jenv, arrays);                                                                  \
    return status;                                                                               \
  }

TMMB_GEMM_ARRAYS(s, float, tmm_host_io, 0)
TMMB_GEMM_ARRAYS(d, double, tmm_host_io_double, 1)
%}
