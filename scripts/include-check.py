#!/usr/bin/env python3
"""The standard headers each C and C++ source includes for what it uses.

A standard library may include one of its headers from another (libstdc++ 12's
<mutex> brings <system_error>), and a file that relies on it builds there and fails
on the next release (GCC 13's libstdc++ does not). Compilers cannot see this, so
this script reads the sources: for each use of a standard name (std::system_error,
std::pair, memcpy, uint64_t, ...) the header that declares it must be included by
the file itself or by a header of this project that it includes (transitively); the
project's own headers are stable, the standard library's insides are not. It is a
reader, not a compiler: names are matched by pattern, outside comments and strings.

  scripts/include-check.py              every tracked source under include/, lib/,
                                        blas/, tests/, examples/ and bench/
  scripts/include-check.py FILE...      those files
  scripts/include-check.py --direct ... count only the file's own includes (an audit)

Prints "file: <header> (the use)" for each miss, and exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

CXX = {
    "system_error": r"std::(system_error|error_code|error_condition|errc|generic_category|system_category|make_error_code)\b",
    "stdexcept": r"std::(runtime_error|logic_error|invalid_argument|out_of_range|length_error|overflow_error|underflow_error|domain_error|range_error)\b",
    "new": r"std::(bad_alloc|nothrow|launder|align_val_t|bad_array_new_length|new_handler|set_new_handler)\b|\bnew\s*\(",
    "cstring": r"std::(mem(cpy|set|cmp|move|chr)|str(len|cmp|ncmp|chr|rchr|str|error|cpy|ncpy|spn|cspn|tok))\b|(?<![\w:.>])(memcpy|memset|memcmp|memmove|strlen|strcmp|strncmp|strchr|strrchr|strstr|strerror|strcpy|strncpy)\s*\(",
    "memory": r"std::(unique_ptr|make_unique|shared_ptr|make_shared|weak_ptr|addressof|allocator|align|uninitialized_\w+|destroy_at|default_delete|pointer_traits)\b",
    "algorithm": r"std::(min|max|minmax|sort|stable_sort|fill|fill_n|copy|copy_n|copy_if|clamp|find|find_if|find_if_not|any_of|all_of|none_of|max_element|min_element|reverse|count|count_if|equal|lower_bound|upper_bound|nth_element|transform|remove|remove_if|unique|binary_search|for_each|mismatch|search|partition|rotate|shuffle|generate|replace|is_sorted|lexicographical_compare|copy_backward|swap_ranges|iter_swap)\b",
    "utility": r"std::(pair|make_pair|move|forward|exchange|swap|index_sequence|make_index_sequence|integer_sequence|as_const|declval|in_place\w*)\b",
    "tuple": r"std::(tuple|make_tuple|tie|get<\d|tuple_size|apply|forward_as_tuple)\b",
    "cstdint": r"(?<![\w])(std::)?(u?int(8|16|32|64|ptr|max)_t|u?int_(fast|least)\d+_t|U?INT(8|16|32|64|PTR|MAX)_(MAX|MIN)|SIZE_MAX|PTRDIFF_MAX)\b",
    "cstddef": r"std::(size_t|ptrdiff_t|nullptr_t|max_align_t|byte)\b|\boffsetof\s*\(",
    "string": r"std::(string|wstring|to_string|stoi|stol|stoll|stoul|stoull|stof|stod|char_traits|getline|basic_string)\b",
    "string_view": r"std::(string_view|basic_string_view)\b",
    "vector": r"std::vector\b",
    "array": r"std::array\b",
    "deque": r"std::deque\b",
    "list": r"std::list\b",
    "map": r"std::(map|multimap)\b",
    "set": r"std::(set|multiset)\b",
    "unordered_map": r"std::unordered_(multi)?map\b",
    "unordered_set": r"std::unordered_(multi)?set\b",
    "mutex": r"std::(mutex|recursive_mutex|timed_mutex|lock_guard|unique_lock|scoped_lock|call_once|once_flag|try_lock|lock\(|defer_lock|adopt_lock|try_to_lock)\b",
    "shared_mutex": r"std::(shared_mutex|shared_lock|shared_timed_mutex)\b",
    "condition_variable": r"std::condition_variable(_any)?\b",
    "thread": r"std::(thread|this_thread|jthread)\b",
    "chrono": r"std::chrono\b",
    "atomic": r"std::(atomic\w*|memory_order\w*)\b",
    "functional": r"std::(function|hash|ref|cref|invoke|bind|plus|minus|multiplies|less|greater|equal_to|reference_wrapper|mem_fn)\b",
    "limits": r"std::numeric_limits\b",
    "cmath": r"std::(isnan|isinf|isfinite|isnormal|fabs|fabsf|sqrt|sqrtf|fma|fmaf|nextafter|nextafterf|ldexp|ldexpf|frexp|pow|powf|floor|ceil|log|log2|log10|exp|exp2|round|lround|llround|trunc|signbit|copysign|fmin|fmax|hypot|cbrt|nan|nanf|modf|fpclassify|remainder|fmod|sin|cos|tan|tanh|ilogb|scalbn|rint|nearbyint)\b|\b(FP_NAN|FP_INFINITE|FP_ZERO|FP_SUBNORMAL|FP_NORMAL|HUGE_VALF?|INFINITY|NAN)\b",
    "cstdio": r"std::(printf|fprintf|snprintf|sprintf|vsnprintf|vfprintf|FILE|fopen|fclose|fputs|fputc|puts|fflush|fwrite|fread|perror|remove|rename|tmpfile|fgets|sscanf|fseek|ftell|putchar|fileno)\b|(?<![\w:.>])(printf|fprintf|snprintf|sprintf|vsnprintf|fopen|fclose|fputs|fputc|puts|fflush|fwrite|fread|perror|fgets|sscanf|putchar)\s*\(|\b(stderr|stdout|stdin|FILE\s*\*|EOF)\b",
    "cstdlib": r"std::(getenv|strtol|strtoul|strtoll|strtoull|strtod|strtof|malloc|calloc|realloc|free|exit|_Exit|abort|atoi|atol|atoll|atof|qsort|bsearch|rand|srand|aligned_alloc|setenv|unsetenv|system|div|llabs|labs|quick_exit|atexit)\b|(?<![\w:.>])(getenv|strtol|strtoul|strtoll|strtoull|strtod|strtof|malloc|calloc|realloc|free|exit|_Exit|abort|atoi|atol|atof|qsort|setenv|unsetenv|posix_memalign|aligned_alloc|mkstemp|mkdtemp|rand|srand)\s*\(|\b(EXIT_SUCCESS|EXIT_FAILURE|RAND_MAX)\b",
    "sstream": r"std::(ostringstream|istringstream|stringstream)\b",
    "iostream": r"std::(cout|cerr|clog|cin)\b",
    "ostream": r"std::(ostream|endl|flush)\b",
    "istream": r"std::istream\b",
    "iomanip": r"std::(setw|setprecision|setfill|put_time|quoted)\b",
    "ios": r"std::(fixed|scientific|hex|dec|boolalpha|showpos|defaultfloat|hexfloat|ios_base|ios)\b",
    "fstream": r"std::(ifstream|ofstream|fstream)\b",
    "optional": r"std::(optional|nullopt|make_optional)\b",
    "variant": r"std::(variant|visit|holds_alternative|get_if|monostate)\b",
    "initializer_list": r"std::initializer_list\b",
    "type_traits": r"std::(is_\w+|enable_if\w*|remove_\w+|decay\w*|conditional\w*|integral_constant|true_type|false_type|underlying_type\w*|add_\w+|common_type\w*|make_signed\w*|make_unsigned\w*|invoke_result\w*|result_of|aligned_storage|void_t|bool_constant|conjunction|disjunction|negation|extent|rank)\b",
    "exception": r"std::(exception|exception_ptr|current_exception|rethrow_exception|make_exception_ptr|terminate|uncaught_exceptions|nested_exception|throw_with_nested|set_terminate)\b",
    "numeric": r"std::(accumulate|iota|gcd|lcm|inner_product|partial_sum|reduce|transform_reduce|exclusive_scan|inclusive_scan|adjacent_difference)\b",
    "random": r"std::(random_device|mt19937\w*|minstd_rand\w*|default_random_engine|uniform_real_distribution|uniform_int_distribution|normal_distribution|bernoulli_distribution|seed_seq)\b",
    "future": r"std::(future|async|promise|packaged_task|shared_future|launch)\b",
    "bitset": r"std::bitset\b",
    "filesystem": r"std::filesystem\b",
    "streambuf_iter": r"std::(istreambuf_iterator|ostreambuf_iterator)\b",
    "iterator": r"std::(back_inserter|inserter|iterator_traits|next|prev|advance|distance|reverse_iterator|make_move_iterator|ostream_iterator)\b",
    "cerrno": r"(?<![\w])(errno|EINVAL|ENOMEM|EAGAIN|ENOENT|EINTR|ERANGE|EEXIST|EBUSY|EPERM|EACCES)\b",
    "cstdarg": r"\b(va_list|va_start|va_end|va_arg|va_copy)\b",
    "cassert": r"(?<![\w.])assert\s*\(",
    "climits": r"\b(INT_MAX|INT_MIN|UINT_MAX|LONG_MAX|LONG_MIN|LLONG_MAX|LLONG_MIN|ULLONG_MAX|ULONG_MAX|CHAR_BIT|SHRT_MAX|UCHAR_MAX|SCHAR_MAX)\b",
    "cfloat": r"\b(FLT_(MAX|MIN|EPSILON|DIG|MANT_DIG|TRUE_MIN)|DBL_(MAX|MIN|EPSILON|DIG|MANT_DIG)|FLT_EVAL_METHOD)\b",
    "cfenv": r"\b(fesetround|fegetround|FE_\w+|feclearexcept|fetestexcept|fenv_t)\b",
    "cctype": r"std::(isdigit|isspace|isalpha|isalnum|isupper|islower|toupper|tolower|isxdigit|isprint|ispunct)\b|(?<![\w:.>])(isdigit|isspace|isalpha|isalnum|toupper|tolower|isxdigit|isprint)\s*\(",
    "ctime": r"std::(time|clock|time_t|tm|localtime|gmtime|strftime|timespec|difftime)\b|\b(clock_gettime|CLOCK_MONOTONIC|CLOCK_REALTIME|nanosleep)\b",
    "csignal": r"std::(signal|raise|sig_atomic_t)\b|\b(SIGSEGV|SIGABRT|SIGKILL|SIGTERM|SIGINT|SIGBUS|SIGFPE|SIGALRM)\b",
    "csetjmp": r"\b(setjmp|longjmp|jmp_buf|sigsetjmp|siglongjmp|sigjmp_buf)\b",
}
# Equivalent headers: what satisfies each (C names, and documented guarantees).
EQUIV = {
    "cstdint": {"cstdint", "stdint.h", "inttypes.h", "cinttypes"},
    "cstring": {"cstring", "string.h"},
    "cstdio": {"cstdio", "stdio.h"},
    "cstdlib": {"cstdlib", "stdlib.h"},
    "cmath": {"cmath", "math.h"},
    "cstddef": {"cstddef", "stddef.h"},
    "cerrno": {"cerrno", "errno.h"},
    "cstdarg": {"cstdarg", "stdarg.h"},
    "cassert": {"cassert", "assert.h"},
    "climits": {"climits", "limits.h"},
    "cfloat": {"cfloat", "float.h"},
    "cfenv": {"cfenv", "fenv.h"},
    "cctype": {"cctype", "ctype.h"},
    "ctime": {"ctime", "time.h"},
    "csignal": {"csignal", "signal.h"},
    "csetjmp": {"csetjmp", "setjmp.h"},
    # std::swap is declared in <utility> and in <algorithm> (pre C++11) and
    # guaranteed by <utility>; std::move (the cast) in <utility>.
    "utility": {"utility"},
    # iostream includes ostream/istream/ios
    "ostream": {"ostream", "iostream", "sstream", "fstream"},
    "istream": {"istream", "iostream", "sstream", "fstream"},
    "ios": {"ios", "iostream", "ostream", "istream", "sstream", "fstream", "iomanip"},
    "initializer_list": {"initializer_list", "vector", "string", "map", "set", "array",
                         "unordered_map", "unordered_set", "deque", "list", "algorithm",
                         "utility", "random", "valarray"},
    "streambuf_iter": {"iterator"},
    "iterator": {"iterator", "vector", "string", "array", "map", "set", "deque", "list",
                 "unordered_map", "unordered_set", "string_view"},
}
C_MAP = {"cstdint": "stdint.h", "cstring": "string.h", "cstdio": "stdio.h", "cstdlib": "stdlib.h",
         "cmath": "math.h", "cstddef": "stddef.h", "cerrno": "errno.h", "cstdarg": "stdarg.h",
         "cassert": "assert.h", "climits": "limits.h", "cfloat": "float.h", "cfenv": "fenv.h",
         "cctype": "ctype.h", "ctime": "time.h", "csignal": "signal.h", "csetjmp": "setjmp.h"}
# POSIX symbols also live in unistd etc; time/signal names from POSIX headers.
POSIX_OK = {
    "ctime": {"time.h", "ctime", "sys/time.h"},
    "csignal": {"signal.h", "csignal", "sys/wait.h"},
}

INC = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def strip(text):
    text = re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group(0)), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    return text


def includes(path):
    with open(path, errors="replace") as f:
        return INC.findall(f.read())


def resolve(inc, path, roots):
    for d in [os.path.dirname(path)] + roots:
        p = os.path.normpath(os.path.join(d, inc))
        if os.path.isfile(p):
            return p
    return None


def closure(path, roots, seen=None):
    """System headers included by path and by the project headers it includes."""
    if seen is None:
        seen = set()
    if path in seen:
        return set()
    seen.add(path)
    out = set()
    for kind, inc in includes(path):
        p = resolve(inc, path, roots)
        if p and (kind == '"' or p.startswith(REPO)):
            out |= closure(p, roots, seen)
        else:
            out.add(inc)
    return out


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = re.compile(r"\.(c|h|cpp|hpp|cu|cuh)$")


def main():
    args = sys.argv[1:]
    direct = "--direct" in args
    files = [a for a in args if a != "--direct"]
    if not files:
        listed = subprocess.run(["git", "-C", REPO, "ls-files", "include", "lib", "blas",
                                 "tests", "examples", "bench"], check=True, capture_output=True,
                                text=True).stdout.split()
        files = [os.path.join(REPO, f) for f in listed if SOURCES.search(f)]
    roots = [os.path.join(REPO, d) for d in ("include", "lib", "blas", "tests", "tests/blas",
                                             "bench")]
    bad = 0
    for path in files:
        path = os.path.abspath(path)
        is_c = path.endswith((".c", ".h"))
        with open(path, errors="replace") as f:
            text = strip(f.read())
        own = {inc for _, inc in includes(path)}
        have = own if direct else closure(path, roots)
        missing = []
        for hdr, rx in CXX.items():
            m = re.search(rx, text)
            if not m:
                continue
            ok = EQUIV.get(hdr, {hdr}) | POSIX_OK.get(hdr, set())
            if have & ok:
                continue
            want = C_MAP.get(hdr, hdr) if is_c else hdr
            missing.append(f"<{want}> ({m.group(0).strip()})")
        if missing:
            bad += 1
            print(os.path.relpath(path, REPO) + ": " + ", ".join(missing))
    if bad:
        print(f"include-check: {bad} of {len(files)} files use standard names without their "
              "header (add it to the file)")
        return 1
    print(f"include-check: {len(files)} files include the standard headers they use")
    return 0


if __name__ == "__main__":
    sys.exit(main())
