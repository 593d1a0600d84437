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
 * the idiomatic API. The library works on two kinds of memory only: direct FloatBuffers
 * (native order, checked in Java), in place through GetDirectBufferAddress; and the
 * Engine's native staging, into which tmmb_sgemm_arrays (below) copies float[] arrays.
 * No array is ever pinned (no GetPrimitiveArrayCritical) while the library works. The
 * Java layer checks every length and offset before it calls here.
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
 * pinned; the helper copies them with Get/SetFloatArrayRegion. */
%typemap(jni) jfloatArray "jfloatArray"
%typemap(jtype) jfloatArray "float[]"
%typemap(jstype) jfloatArray "float[]"
%typemap(javain) jfloatArray "$javainput"
%typemap(in) jfloatArray %{ $1 = $input; %}
%typemap(in, numinputs=0) JNIEnv* jenv %{ $1 = jenv; %}

/* Java's own entries in the whitelist (tiledmm.i has the shared ones). */
%rename("%s") tmm_destroy;
%rename("%s") tmmb_sgemm_direct;
%rename("%s") tmmb_staging_new;
%rename("%s") tmmb_staging_delete;
%rename("%s") tmmb_sgemm_arrays;
%rename("%s") TMMB_STAGING_NO_MEMORY;
%rename("%s") TMMB_STAGING_CHUNK;

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
 * Staging of float[] arrays: the one place where the Java binding copies.
 *
 * JNI forbids holding an array (GetPrimitiveArrayCritical) across a long native
 * section: it stalls the garbage collector in every thread. So each float[] matrix
 * is copied into native staging owned by the Engine, the product runs on the
 * staging, and only the m x n part of C is copied back (C's padding between rows or
 * columns is never written: another thread may own it). Copies go through
 * Get/SetFloatArrayRegion in pieces of at most TMMB_STAGING_CHUNK floats, so the
 * thread is back in native code, where it does not hold the collector up, between
 * pieces. Matrices are packed on the way in (leading dimension = inner size), so
 * padding is neither copied nor staged; beta = 0 skips copying C in. The staging
 * only grows and lives as long as the Engine (its Cleaner frees it).
 *
 * When the library's pinned staging arrives, it replaces this block: from Java, only
 * Engine's constructor, its Release and Engine.sgemm over float[] call into it.
 * ------------------------------------------------------------------------------ */
%inline %{
/* Returned by tmmb_sgemm_arrays when the staging cannot be allocated. */
#define TMMB_STAGING_NO_MEMORY (-1)
/* The most floats one Get/SetFloatArrayRegion call copies (256 KiB). */
#define TMMB_STAGING_CHUNK 65536

typedef struct tmmb_staging tmmb_staging;

static tmmb_staging* tmmb_staging_new(void);
static void tmmb_staging_delete(tmmb_staging* staging);
static int tmmb_sgemm_arrays(JNIEnv* jenv, tmm_handle handle, tmmb_staging* staging,
                             int layout, int trans_a, int trans_b, int64_t m, int64_t n,
                             int64_t k, float alpha, jfloatArray array_a, int64_t offset_a,
                             int64_t lda, jfloatArray array_b, int64_t offset_b, int64_t ldb,
                             float beta, jfloatArray array_c, int64_t offset_c, int64_t ldc);
%}

%{
#include <stdlib.h>

/* One grow-only buffer per matrix: A, B, C. */
struct tmmb_staging {
  float* data[3];
  int64_t capacity[3]; /* floats */
};

static tmmb_staging* tmmb_staging_new(void) {
  return (tmmb_staging*)calloc(1, sizeof(tmmb_staging));
}

static void tmmb_staging_delete(tmmb_staging* staging) {
  if (!staging) return;
  for (int i = 0; i < 3; i++) free(staging->data[i]);
  free(staging);
}

/* Buffer `slot` with room for `count` floats, or NULL if it cannot grow that far. The
 * old content is not kept: every call copies its operands in afresh. */
static float* tmmb_staging_reserve(tmmb_staging* staging, int slot, int64_t count) {
  if (count <= staging->capacity[slot]) return staging->data[slot];
  int64_t grown = staging->capacity[slot] + staging->capacity[slot] / 2;
  if (grown < count) grown = count;
  float* data = (float*)malloc((size_t)grown * sizeof(float));
  if (!data) {
    data = (float*)malloc((size_t)count * sizeof(float));
    grown = count;
  }
  if (!data) return NULL;
  free(staging->data[slot]);
  staging->data[slot] = data;
  staging->capacity[slot] = grown;
  return data;
}

/* A stored matrix as CBLAS sees it: `outer` rows (row-major) or columns (column-major)
 * of `inner` elements, `ld` apart, from `offset` in its array. */
typedef struct tmmb_operand {
  jfloatArray array;
  int64_t offset, ld, outer, inner;
  int used;
} tmmb_operand;

static tmmb_operand tmmb_operand_of(jfloatArray array, int64_t offset, int64_t ld, int row_major,
                                    int64_t rows, int64_t cols, int used) {
  tmmb_operand op;
  op.array = array;
  op.offset = offset;
  op.ld = ld;
  op.outer = row_major ? rows : cols;
  op.inner = row_major ? cols : rows;
  op.used = used;
  return op;
}

/* The library's rule for a leading dimension (checked for every matrix, used or not). */
static int tmmb_ld_valid(const tmmb_operand* op) {
  return op->ld >= (op->inner > 1 ? op->inner : 1);
}

/* Copies the outer x inner part of `op` between its array and `packed` (leading
 * dimension inner), in pieces of at most TMMB_STAGING_CHUNK floats. The Java layer
 * has checked that the part lies inside the array. Returns 0 if JNI raised. */
static int tmmb_copy(JNIEnv* jenv, const tmmb_operand* op, float* packed, int to_array) {
  int64_t outer = op->outer, inner = op->inner;
  if (op->ld == inner) { /* no padding: one span */
    inner *= outer;
    outer = 1;
  }
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t done = 0; done < inner; done += TMMB_STAGING_CHUNK) {
      int64_t left = inner - done;
      jsize len = (jsize)(left < TMMB_STAGING_CHUNK ? left : TMMB_STAGING_CHUNK);
      jsize start = (jsize)(op->offset + o * op->ld + done);
      float* staged = packed + o * inner + done;
      if (to_array)
        (*jenv)->SetFloatArrayRegion(jenv, op->array, start, len, staged);
      else
        (*jenv)->GetFloatArrayRegion(jenv, op->array, start, len, staged);
      if ((*jenv)->ExceptionCheck(jenv)) return 0;
    }
  }
  return 1;
}

/* Stages `op` for the library: its packed buffer (copied in if `copy_in`) and its
 * packed leading dimension. Unused operands pass NULL and their own ld. */
static int tmmb_stage(JNIEnv* jenv, tmmb_staging* staging, int slot, const tmmb_operand* op,
                      int copy_in, float** data, int64_t* ld) {
  *data = NULL;
  *ld = op->ld;
  if (!op->used) return 0;
  *data = tmmb_staging_reserve(staging, slot, op->outer * op->inner);
  if (!*data) return TMMB_STAGING_NO_MEMORY;
  *ld = op->inner;
  if (copy_in && !tmmb_copy(jenv, op, *data, 0)) return TMM_ERROR_INTERNAL;
  return 0;
}

static int tmmb_sgemm_arrays(JNIEnv* jenv, tmm_handle handle, tmmb_staging* staging,
                             int layout, int trans_a, int trans_b, int64_t m, int64_t n,
                             int64_t k, float alpha, jfloatArray array_a, int64_t offset_a,
                             int64_t lda, jfloatArray array_b, int64_t offset_b, int64_t ldb,
                             float beta, jfloatArray array_c, int64_t offset_c, int64_t ldc) {
  const int row = layout == TMM_ROW_MAJOR;
  const int ta = trans_a == TMM_TRANS, tb = trans_b == TMM_TRANS;
  const int sizes_valid = m >= 0 && n >= 0 && k >= 0;
  const int uses_c = sizes_valid && m > 0 && n > 0;
  const int uses_ab = uses_c && k > 0 && alpha != 0.0f;
  tmmb_operand a = tmmb_operand_of(array_a, offset_a, lda, row, ta ? k : m, ta ? m : k, uses_ab);
  tmmb_operand b = tmmb_operand_of(array_b, offset_b, ldb, row, tb ? n : k, tb ? k : n, uses_ab);
  tmmb_operand c = tmmb_operand_of(array_c, offset_c, ldc, row, m, n, uses_c);

  if (!staging) return TMM_ERROR_INVALID_VALUE;
  if (!sizes_valid || !tmmb_ld_valid(&a) || !tmmb_ld_valid(&b) || !tmmb_ld_valid(&c)) {
    /* A negative size or a leading dimension below max(1, inner) is rejected by the
     * library (the header's contract) before it touches memory. Give it the caller's
     * arguments, with a stand-in for each array, so that its message names the
     * caller's mistake. */
    static float stand_in;
    return tmm_sgemm(handle, (tmm_layout)layout, (tmm_transpose)trans_a,
                     (tmm_transpose)trans_b, m, n, k, alpha, array_a ? &stand_in : NULL, lda,
                     array_b ? &stand_in : NULL, ldb, beta, array_c ? &stand_in : NULL, ldc);
  }

  float *staged_a, *staged_b, *staged_c;
  int64_t packed_lda, packed_ldb, packed_ldc;
  int status = tmmb_stage(jenv, staging, 0, &a, 1, &staged_a, &packed_lda);
  if (status == 0) status = tmmb_stage(jenv, staging, 1, &b, 1, &staged_b, &packed_ldb);
  if (status == 0)
    status = tmmb_stage(jenv, staging, 2, &c, beta != 0.0f, &staged_c, &packed_ldc);
  if (status != 0) return status;
  status = tmm_sgemm(handle, (tmm_layout)layout, (tmm_transpose)trans_a, (tmm_transpose)trans_b,
                     m, n, k, alpha, staged_a, packed_lda, staged_b, packed_ldb, beta, staged_c,
                     packed_ldc);
  if (status == TMM_SUCCESS && c.used && !tmmb_copy(jenv, &c, staged_c, 1))
    return TMM_ERROR_INTERNAL;
  return status;
}
%}
