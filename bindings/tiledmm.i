/* tiledmm.i: the part of the SWIG interface that Java and C# share.
 *
 * Naming rule. This generated layer keeps the C names (tmm_sgemm, TMM_ROW_MAJOR), so
 * it maps one to one onto include/tiledmm/tiledmm.h; it is package-private (Java) or
 * internal (C#) and nobody outside the binding calls it. The public classes written
 * over it follow one rule per language, stated at the top of tiledmm_java.i and
 * tiledmm_csharp.i:
 *   - Java (package org.tiledmm): JavaBeans. Types in UpperCamelCase with "Tiledmm"
 *     as one word (TiledmmException); a property is getX()/setX(), also when static
 *     (Engine.getVersion()); actions are lowerCamelCase verbs (sgemm, dgemm,
 *     synchronize, close); enum constants UPPER_SNAKE_CASE.
 *   - C# (namespace TiledMM): the .NET Framework Design Guidelines. PascalCase types,
 *     properties and methods, with the two-letter acronym of the product kept upper
 *     case everywhere (TiledMM, TiledMMException); a property for a value, a method
 *     for an action.
 *   - The handle is called Engine in both languages.
 * The 1.0 names that broke these rules stay, deprecated (@Deprecated / [Obsolete]),
 * for the 1.x series, each pointing at its new name.
 *
 * Only whitelisted symbols are wrapped; everything else in the header is ignored.
 * The list below is what both languages wrap; each language file whitelists, before
 * it includes this file, the few entry points that only it uses (how it passes
 * arrays, how it releases a handle).
 *
 * Enums are plain ints here. The public enum types of both languages (Status,
 * Algorithm, Option, ...) are not written by hand: generate_enums.cmake writes them
 * from the header at build time, so a value added to the header needs no edit in
 * bindings/. The C enum types are whitelisted below only so that each language's
 * tests can compare those generated enums with SWIG's own reading of the header.
 */

%{
#include "tiledmm/tiledmm.h"
%}

%include <stdint.i>
%include <cpointer.i>
%include <carrays.i>

/* Out-parameters of the C API, as small heap cells the wrappers read back. */
%pointer_functions(tmm_handle, tmmb_handle_cell);
%pointer_functions(int, tmmb_int_cell);
%pointer_functions(double, tmmb_double_cell);
%pointer_functions(int64_t, tmmb_int64_cell);
/* A list of device indices for tmm_create_with_devices (an int*, as the cells). */
%array_functions(int, tmmb_int_array);

/* The whitelist shared by both languages. */
%rename("$ignore", regextarget=1, fullname=1) "^.*$";
%rename("%s") tmm_version;
%rename("%s") tmm_status_string;
%rename("%s") tmm_get_error_message;
%rename("%s") tmm_create;
%rename("%s") tmm_create_with_backend;
%rename("%s") tmm_set_algorithm;
%rename("%s") tmm_set_tile_size;
%rename("%s") tmm_get_tile_size;
%rename("%s") tmm_set_coarsening;
%rename("%s") tmm_get_coarsening;
%rename("%s") tmm_synchronize;
%rename("%s") tmm_get_last_time;
%rename("%s") tmm_get_last_timing;
%rename("%s") tmm_get_device_info;
/* 1.2: a handle over several devices, and what each did. */
%rename("%s") tmm_create_with_devices;
%rename("%s") tmm_get_device_count;
%rename("%s") tmm_get_device_info_at;
%rename("%s") tmmb_get_last_device_report;
%rename("%s") tmm_device_report;
/* 1.1: options, the option table, the host staging, the report and the kernel list. */
%rename("%s") tmm_set_option;
%rename("%s") tmm_get_option;
%rename("%s") tmm_get_option_bounds;
%rename("%s") tmm_option_name;
%rename("%s") tmm_reserve_host_staging;
%rename("%s") tmmb_get_last_report;
%rename("%s") tmmb_get_kernel_info;
%rename("%s") tmm_timing;
%rename("%s") tmm_device_info;
%rename("%s") tmm_report;
%rename("%s") tmm_kernel_info;
%rename("%s", %$ismember) "";  /* the fields of those structs */
%rename("%s", %$isconstructor) "";
%rename("%s", %$isdestructor) "";
%rename("%s", regextarget=1) "^TMM_";
/* The C enum types, for the tests only (see the top of this file). */
%rename("%s") tmm_status;
%rename("%s") tmm_layout;
%rename("%s") tmm_transpose;
%rename("%s") tmm_backend;
%rename("%s") tmm_algorithm;
%rename("%s") tmm_option;
%rename("%s", regextarget=1) "^TILEDMM_VERSION";
/* The enum-valued getters, reshaped to int cells (tmm_algorithm*, tmm_backend*). */
%rename("%s") tmmb_get_algorithm;
%rename("%s") tmmb_get_backend;
%rename("%s", regextarget=1) "^tmmb_(handle|int|int64|double)_cell";
%rename("%s", regextarget=1) "^(new_|delete_)?tmmb_int_array(_setitem|_getitem)?$";

/* Struct fields are read by the wrappers, never written. */
%immutable;

%include "tiledmm/tiledmm_version.h"
%include "tiledmm/tiledmm.h"

%inline %{
/* tmm_get_algorithm / tmm_get_backend with an int cell instead of an enum pointer. */
static tmm_status tmmb_get_algorithm(tmm_handle handle, int* out) {
  tmm_algorithm a;
  tmm_status s = tmm_get_algorithm(handle, out ? &a : NULL);
  if (s == TMM_SUCCESS) *out = (int)a;
  return s;
}
static tmm_status tmmb_get_backend(tmm_handle handle, int* out) {
  tmm_backend b;
  tmm_status s = tmm_get_backend(handle, out ? &b : NULL);
  if (s == TMM_SUCCESS) *out = (int)b;
  return s;
}

/* tmm_get_last_report and tmm_get_kernel_info with out->struct_size set to the size
 * of the structs this binding was built with (the languages cannot set it: every
 * field is read-only). The library fills what it has of them; a field an older
 * library lacks stays 0 (SWIG allocates the structs zeroed). */
static tmm_status tmmb_get_last_report(tmm_handle handle, tmm_report* out) {
  if (out) out->struct_size = sizeof(tmm_report);
  return tmm_get_last_report(handle, out);
}
static tmm_status tmmb_get_kernel_info(int index, tmm_kernel_info* out) {
  if (out) out->struct_size = sizeof(tmm_kernel_info);
  return tmm_get_kernel_info(index, out);
}
static tmm_status tmmb_get_last_device_report(tmm_handle handle, int index,
                                              tmm_device_report* out) {
  if (out) out->struct_size = sizeof(tmm_device_report);
  return tmm_get_last_device_report(handle, index, out);
}

%}

/* tmmb_sgemm and tmmb_dgemm: tmm_sgemm / tmm_dgemm on memory given as a base and an
 * element offset, enums as ints. The language layers decide how the memory gets here
 * (C#: pinned arrays; Java: direct buffers) and check every length and offset before
 * they call these. One SWIG macro writes both, so that the two cannot drift apart. */
%define TMMB_GEMM(S, TYPE)
%inline %{
static tmm_status tmmb_##S##gemm(tmm_handle handle, int layout, int trans_a, int trans_b,
                                 int64_t m, int64_t n, int64_t k, TYPE alpha,
                                 const TYPE* array_a, int64_t offset_a, int64_t lda,
                                 const TYPE* array_b, int64_t offset_b, int64_t ldb, TYPE beta,
                                 TYPE* array_c, int64_t offset_c, int64_t ldc) {
  return tmm_##S##gemm(handle, (tmm_layout)layout, (tmm_transpose)trans_a,
                       (tmm_transpose)trans_b, m, n, k, alpha,
                       array_a ? array_a + offset_a : NULL, lda,
                       array_b ? array_b + offset_b : NULL, ldb, beta,
                       array_c ? array_c + offset_c : NULL, ldc);
}
%}
%enddef
TMMB_GEMM(s, float)
TMMB_GEMM(d, double)

/* tmmb_sgemm_strided_batched and tmmb_dgemm_strided_batched: the strided batched calls
 * (since 1.2) on memory given as a base and the element offset of the first product,
 * enums as ints; the language layers check each footprint, (batch - 1) * stride + the
 * matrix's own, before they call these. */
%define TMMB_GEMM_STRIDED_BATCHED(S, TYPE)
%inline %{
static tmm_status tmmb_##S##gemm_strided_batched(
    tmm_handle handle, int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
    TYPE alpha, const TYPE* array_a, int64_t offset_a, int64_t lda, int64_t stride_a,
    const TYPE* array_b, int64_t offset_b, int64_t ldb, int64_t stride_b, TYPE beta,
    TYPE* array_c, int64_t offset_c, int64_t ldc, int64_t stride_c, int64_t batch) {
  return tmm_##S##gemm_strided_batched(
      handle, (tmm_layout)layout, (tmm_transpose)trans_a, (tmm_transpose)trans_b, m, n, k, alpha,
      array_a ? array_a + offset_a : NULL, lda, stride_a, array_b ? array_b + offset_b : NULL, ldb,
      stride_b, beta, array_c ? array_c + offset_c : NULL, ldc, stride_c, batch);
}
%}
%enddef
TMMB_GEMM_STRIDED_BATCHED(s, float)
TMMB_GEMM_STRIDED_BATCHED(d, double)
