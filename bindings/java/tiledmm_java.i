/* tiledmm_java.i: the Java half of the SWIG interface.
 *
 * Naming rule of the public Java API (package org.tiledmm): JavaBeans. Types are
 * UpperCamelCase with "Tiledmm" as one word (Engine, TiledmmException); a property is
 * getX()/setX(), static ones included (Engine.getVersion()); actions are
 * lowerCamelCase verbs (sgemm, synchronize, close); enum constants are
 * UPPER_SNAKE_CASE. The 1.0 names that broke it (class Tiledmm, backend(), lastTime(),
 * lastTiming(), deviceInfo(), version(), bindingVersion(), status(), the public
 * fields of Timing and DeviceInfo) stay as @Deprecated aliases for the 1.x series.
 *
 * Generated classes land in package org.tiledmm, package-private, so users see only
 * the idiomatic API. The library works on two kinds of memory: direct FloatBuffers
 * (native order, checked in Java), in place through GetDirectBufferAddress; and float[]
 * arrays, which it reads and writes through tmm_sgemm_io's functions (below), in
 * pieces, with Get/SetFloatArrayRegion. No array is ever pinned (no
 * GetPrimitiveArrayCritical) while the library works. The Java layer checks every
 * length and offset before it calls here.
 */
%module TiledmmNative

%include "enumtypeunsafe.swg"
%javaconst(1);

%pragma(java) jniclassclassmodifiers = "final class"
%pragma(java) moduleclassmodifiers = "final class"
%pragma(java) jniclassimports = ""
%typemap(javaclassmodifiers) SWIGTYPE, SWIGTYPE *, SWIGTYPE &, enum SWIGTYPE "final class"

/* Direct FloatBuffer parameters of tmmb_sgemm_direct. */
%typemap(jni) const float* direct_a, const float* direct_b, float* direct_c "jobject"
%typemap(jtype) const float* direct_a, const float* direct_b, float* direct_c "java.nio.FloatBuffer"
%typemap(jstype) const float* direct_a, const float* direct_b, float* direct_c "java.nio.FloatBuffer"
%typemap(javain) const float* direct_a, const float* direct_b, float* direct_c "$javainput"
%typemap(in) const float* direct_a, const float* direct_b, float* direct_c {
  $1 = $input ? (float*)JCALL1(GetDirectBufferAddress, jenv, $input) : NULL;
}

/* float[] parameters of tmmb_sgemm_arrays: passed through as references, never
 * pinned; the library's threads copy them with Get/SetFloatArrayRegion. */
%typemap(jni) jfloatArray "jfloatArray"
%typemap(jtype) jfloatArray "float[]"
%typemap(jstype) jfloatArray "float[]"
%typemap(javain) jfloatArray "$javainput"
%typemap(in) jfloatArray %{ $1 = $input; %}
%typemap(in, numinputs=0) JNIEnv* jenv %{ $1 = jenv; %}

/* Java's own entries in the whitelist (tiledmm.i has the shared ones). */
%rename("%s") tmm_destroy;
%rename("%s") tmmb_sgemm_direct;
%rename("%s") tmmb_sgemm_arrays;
%rename("%s") TMMB_NO_MEMORY;
%rename("%s") TMMB_COPY_CHUNK;

%include "../tiledmm.i"

%inline %{
/* tmm_sgemm on direct FloatBuffers, each starting at its element offset. */
static tmm_status tmmb_sgemm_direct(tmm_handle handle, int layout, int trans_a, int trans_b,
                                    int64_t m, int64_t n, int64_t k, float alpha,
                                    const float* direct_a, int64_t offset_a, int64_t lda,
                                    const float* direct_b, int64_t offset_b, int64_t ldb,
                                    float beta, float* direct_c, int64_t offset_c, int64_t ldc) {
  return tmmb_sgemm(handle, layout, trans_a, trans_b, m, n, k, alpha, direct_a, offset_a, lda,
                    direct_b, offset_b, ldb, beta, direct_c, offset_c, ldc);
}
%}

/* ------------------------------------------------------------------------------ *
 * float[] arrays through tmm_sgemm_io: the one place where the Java binding copies.
 *
 * JNI forbids holding an array (GetPrimitiveArrayCritical) across a long native
 * section: it stalls the garbage collector in every thread. So the library reads
 * A, B (and C when beta != 0) and writes C's m x n part (never its padding: another
 * thread may own it) through the functions below, which copy with
 * Get/SetFloatArrayRegion in pieces of at most TMMB_COPY_CHUNK floats. On CUDA's
 * streamed path these copies are the packing step itself, done by the library's
 * packing threads into its pinned staging while the GPU works (one pass over each
 * array, overlapped); elsewhere the library reads whole operands into memory of its
 * own first. The library's threads attach to the JVM as daemons on their first copy
 * and detach when they end. Each array is held by a global reference for the call.
 * ------------------------------------------------------------------------------ */
%inline %{
/* Returned by tmmb_sgemm_arrays when the JVM has no memory for a global reference. */
#define TMMB_NO_MEMORY (-1)
/* The most floats one Get/SetFloatArrayRegion call copies (256 KiB). */
#define TMMB_COPY_CHUNK 65536

static int tmmb_sgemm_arrays(JNIEnv* jenv, tmm_handle handle, int layout, int trans_a,
                             int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                             jfloatArray array_a, int64_t offset_a, int64_t lda,
                             jfloatArray array_b, int64_t offset_b, int64_t ldb, float beta,
                             jfloatArray array_c, int64_t offset_c, int64_t ldc);
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

/* One float[] matrix: a global reference (usable from any thread) and the offset of
 * its first element. */
typedef struct tmmb_array {
  jfloatArray array;
  int64_t offset;
} tmmb_array;

/* count floats between the array, from `offset` past the matrix's first element, and
 * `buffer`, in pieces. The Java layer has checked that they lie inside the array, so
 * a failure (non-zero) means the JVM could not attach the thread or raised. */
static int tmmb_copy(void* user, int64_t offset, int64_t count, float* buffer, int to_array) {
  const tmmb_array* a = (const tmmb_array*)user;
  JNIEnv* env = tmmb_env();
  if (!env) return 1;
  for (int64_t done = 0; done < count; done += TMMB_COPY_CHUNK) {
    int64_t left = count - done;
    jsize len = (jsize)(left < TMMB_COPY_CHUNK ? left : TMMB_COPY_CHUNK);
    jsize start = (jsize)(a->offset + offset + done);
    if (to_array)
      (*env)->SetFloatArrayRegion(env, a->array, start, len, buffer + done);
    else
      (*env)->GetFloatArrayRegion(env, a->array, start, len, buffer + done);
    if ((*env)->ExceptionCheck(env)) {
      (*env)->ExceptionClear(env);
      return 2;
    }
  }
  return 0;
}

static int tmmb_read(void* user, int64_t offset, int64_t count, float* dst) {
  return tmmb_copy(user, offset, count, dst, 0);
}

static int tmmb_write(void* user, int64_t offset, int64_t count, const float* src) {
  return tmmb_copy(user, offset, count, (float*)src, 1);
}

static int tmmb_sgemm_arrays(JNIEnv* jenv, tmm_handle handle, int layout, int trans_a,
                             int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                             jfloatArray array_a, int64_t offset_a, int64_t lda,
                             jfloatArray array_b, int64_t offset_b, int64_t ldb, float beta,
                             jfloatArray array_c, int64_t offset_c, int64_t ldc) {
  if (!tmmb_vm && (*jenv)->GetJavaVM(jenv, &tmmb_vm) != 0) return TMM_ERROR_INTERNAL;
  pthread_once(&tmmb_once, tmmb_init);
  jfloatArray given[3] = {array_a, array_b, array_c};
  const int64_t offsets[3] = {offset_a, offset_b, offset_c};
  tmmb_array arrays[3];
  tmm_host_io io[3];
  int status = 0;
  for (int i = 0; i < 3; i++) {
    arrays[i].array = NULL;
    arrays[i].offset = offsets[i];
    if (given[i]) {
      arrays[i].array = (jfloatArray)(*jenv)->NewGlobalRef(jenv, given[i]);
      if (!arrays[i].array) {
        (*jenv)->ExceptionClear(jenv);
        status = TMMB_NO_MEMORY;
      }
    }
    io[i].struct_size = sizeof io[i];
    io[i].read = tmmb_read;
    io[i].write = i == 2 ? tmmb_write : NULL;
    io[i].user = &arrays[i];
  }
  if (status == 0) {
    status = tmm_sgemm_io(handle, (tmm_layout)layout, (tmm_transpose)trans_a,
                          (tmm_transpose)trans_b, m, n, k, alpha, array_a ? &io[0] : NULL, lda,
                          array_b ? &io[1] : NULL, ldb, beta, array_c ? &io[2] : NULL, ldc);
  }
  for (int i = 0; i < 3; i++)
    if (arrays[i].array) (*jenv)->DeleteGlobalRef(jenv, arrays[i].array);
  return status;
}
%}
