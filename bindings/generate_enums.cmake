# generate_enums.cmake: writes the enum types of the Java and C# bindings from the
# `typedef enum tmm_x { ... } tmm_x;` blocks of tiledmm.h, so that a value (a status,
# an algorithm, an option) added to the header appears in both bindings with no edit
# in bindings/. Run at build time by java/ and csharp/:
#
#   cmake -DHEADER=include/tiledmm/tiledmm.h -DLANGUAGE=java|csharp -DOUT=DIR
#         -P generate_enums.cmake
#
# Java: DIR/<Type>.java, one public enum per C enum, in package org.tiledmm. C#:
# DIR/Enums.cs, every enum, in namespace TiledMM. Files are rewritten only when their
# text changes; Java files of enums that left the header are removed.
#
# What is read from the header: each enumerator's name and value (an integer literal;
# none means the previous value + 1, as in C), the comment after it (its doc comment)
# and the comment just before the typedef (the type's doc comment).
#
# Names: the table below gives each C enum its binding type and the prefix its
# enumerators lose (TMM_ALGO_BLOCKED -> BLOCKED). An enum missing from the table is
# still generated: tmm_foo_bar becomes FooBar, losing TMM_FOO_BAR_ if every enumerator
# has it, else TMM_, and is taken to be one the library does not return. Java keeps
# the rest as it is (UPPER_SNAKE_CASE), C# makes it PascalCase (NO_TRANS -> NoTrans).
#
# Values the library does not know: C# enums hold any number, so a value a newer
# library returns stays that number ((Algorithm)7; Enum.IsDefined tells). A Java enum
# cannot, so each enum the library returns (RETURNED in the table; statuses,
# backends, algorithms) gets one more constant, UNKNOWN, that of(int) gives for any
# other number; the binding refuses to pass UNKNOWN to the library.

cmake_minimum_required(VERSION 3.16)

if(NOT HEADER OR NOT OUT OR NOT LANGUAGE MATCHES "^(java|csharp)$")
  message(FATAL_ERROR "usage: cmake -DHEADER=tiledmm.h -DLANGUAGE=java|csharp -DOUT=dir -P "
                      "generate_enums.cmake")
endif()

# binding_enum(C_TYPE NAME PREFIXES... [RETURNED]): the table's rows.
function(binding_enum c_type name)
  cmake_parse_arguments(PARSE_ARGV 2 arg "RETURNED" "" "PREFIXES")
  set(${c_type}_name ${name} PARENT_SCOPE)
  set(${c_type}_prefixes ${arg_PREFIXES} PARENT_SCOPE)
  set(${c_type}_returned ${arg_RETURNED} PARENT_SCOPE)
endfunction()

binding_enum(tmm_status Status PREFIXES TMM_ERROR_ TMM_ RETURNED)
binding_enum(tmm_layout Layout PREFIXES TMM_)
binding_enum(tmm_transpose Transpose PREFIXES TMM_)
binding_enum(tmm_backend Backend PREFIXES TMM_BACKEND_ RETURNED)
binding_enum(tmm_algorithm Algorithm PREFIXES TMM_ALGO_ RETURNED)
binding_enum(tmm_option Option PREFIXES TMM_OPTION_)
binding_enum(tmm_host_path HostPath PREFIXES TMM_HOST_PATH_ RETURNED)
binding_enum(tmm_math_mode MathMode PREFIXES TMM_MATH_ RETURNED)
binding_enum(tmm_precision Precision PREFIXES TMM_PRECISION_ RETURNED)

# ---------------------------------------------------------------------------------
# Text helpers. ';', '[' and ']' would split or join CMake list items, so the text
# carries stand-ins for them (protect) until write_if_changed puts them back; text
# is only ever appended to, never kept in a list.
# ---------------------------------------------------------------------------------

function(protect var text)
  string(REPLACE ";" "%%semicolon%%" text "${text}")
  string(REPLACE "[" "%%open%%" text "${text}")
  string(REPLACE "]" "%%close%%" text "${text}")
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

# The words of a /* comment */, on one line.
function(comment_text var comment)
  string(REGEX REPLACE "^/\\*+" "" comment "${comment}")
  string(REGEX REPLACE "\\*+/$" "" comment "${comment}")
  string(REGEX REPLACE "\n[ \t]*\\*+( |\t|$)" "\n" comment "${comment}")  # " * " margins
  string(REGEX REPLACE "[ \t\r\n]+" " " comment "${comment}")
  string(STRIP "${comment}" comment)
  set(${var} "${comment}" PARENT_SCOPE)
endfunction()

# Text made safe for a Javadoc (HTML) or XML doc comment.
function(doc_escape var text)
  string(REPLACE "&" "&amp;" text "${text}")
  string(REPLACE "<" "&lt;" text "${text}")
  string(REPLACE ">" "&gt;" text "${text}")
  if(LANGUAGE STREQUAL "java")
    string(REPLACE "@" "&#64;" text "${text}")    # no Javadoc tags
    string(REPLACE "\\u" "\\\\u" text "${text}")  # javac reads \u escapes in comments too
  endif()
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

# UPPER_SNAKE_CASE -> PascalCase.
function(pascal_case var name)
  string(TOLOWER "${name}" name)
  string(REPLACE "_" ";" words "${name}")
  set(out "")
  foreach(word IN LISTS words)
    string(SUBSTRING "${word}" 0 1 first)
    string(SUBSTRING "${word}" 1 -1 rest)
    string(TOUPPER "${first}" first)
    string(APPEND out "${first}${rest}")
  endforeach()
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

# `text` in lines of at most 92 columns, each starting with `lead`.
function(wrap var lead text)
  protect(text "${text}")
  string(REPLACE " " ";" words "${text}")
  set(out "")
  set(line "")
  foreach(word IN LISTS words)
    string(REGEX REPLACE "%%[a-z]+%%" "x" measured "${lead}${line} ${word}")
    string(LENGTH "${measured}" length)
    if(line STREQUAL "")
      set(line "${word}")
    elseif(length GREATER 92)
      string(APPEND out "${lead}${line}\n")
      set(line "${word}")
    else()
      string(APPEND line " ${word}")
    endif()
  endforeach()
  if(NOT line STREQUAL "")
    string(APPEND out "${lead}${line}\n")
  endif()
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

# Writes `content` (stand-ins put back) to `path` unless the file holds exactly that.
function(write_if_changed path content)
  string(REPLACE "%%semicolon%%" ";" content "${content}")
  string(REPLACE "%%open%%" "[" content "${content}")
  string(REPLACE "%%close%%" "]" content "${content}")
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${content}")
endfunction()

set(space "[ \t\r\n]*")

# ---------------------------------------------------------------------------------
# Parsing: for each enum, <c_type>_names (the binding's names, in header order) and,
# per name, <c_type>_value_<name>, <c_type>_c_<name> (its C name) and
# <c_type>_doc_<name>; <c_type>_doc is the type's comment.
# ---------------------------------------------------------------------------------

# parse_body(C_TYPE BODY): the enumerators of one enum.
function(parse_body c_type body)
  set(c_names "")
  set(next_value 0)
  set(pending_doc "")
  set(last "")  # the last enumerator while it has no doc comment yet
  while(TRUE)
    string(REGEX REPLACE "^[ \t\r\n]+" "" body "${body}")
    if(body STREQUAL "")
      break()
    endif()
    if(body MATCHES "^/\\*")
      string(FIND "${body}" "*/" end)
      if(end EQUAL -1)
        message(FATAL_ERROR "${HEADER}: unterminated comment in enum ${c_type}")
      endif()
      math(EXPR end "${end} + 2")
      string(SUBSTRING "${body}" 0 ${end} comment)
      string(SUBSTRING "${body}" ${end} -1 body)
      comment_text(text "${comment}")
      if(NOT last STREQUAL "")  # a comment after an enumerator documents it
        set(doc_${last} "${text}")
        set(last "")
      else()                    # one before the first documents the next
        set(pending_doc "${text}")
      endif()
    elseif(body MATCHES "^,")  # a comma after an enumerator's comment
      string(SUBSTRING "${body}" 1 -1 body)
    elseif(body MATCHES "^//[^\n]*")
      string(LENGTH "${CMAKE_MATCH_0}" end)
      string(SUBSTRING "${body}" ${end} -1 body)
    elseif(body MATCHES "^([A-Za-z_][A-Za-z0-9_]*)${space}(=${space}([^,/]*[^,/ \t\r\n]))?${space},?")
      set(c_name "${CMAKE_MATCH_1}")
      set(expr "${CMAKE_MATCH_3}")
      string(LENGTH "${CMAKE_MATCH_0}" end)
      string(SUBSTRING "${body}" ${end} -1 body)
      if(expr STREQUAL "")
        set(value ${next_value})
      elseif(expr MATCHES "^-?(0[xX][0-9a-fA-F]+|[0-9]+)$")
        math(EXPR value "${expr}")
      else()
        message(FATAL_ERROR "${HEADER}: ${c_name} = ${expr}: the bindings take integer "
                            "literals only (the header's values are explicit numbers)")
      endif()
      math(EXPR next_value "${value} + 1")
      list(APPEND c_names ${c_name})
      set(value_${c_name} ${value})
      set(doc_${c_name} "${pending_doc}")
      set(pending_doc "")
      set(last ${c_name})
    else()
      string(SUBSTRING "${body}" 0 40 where)
      message(FATAL_ERROR "${HEADER}: cannot read enum ${c_type} at: ${where}")
    endif()
  endwhile()
  if(NOT c_names)
    message(FATAL_ERROR "${HEADER}: enum ${c_type} has no enumerators")
  endif()

  # The prefix the names lose: the table's, or the default rule.
  if(DEFINED ${c_type}_name)
    set(name ${${c_type}_name})
    set(prefixes ${${c_type}_prefixes})
  else()
    string(REGEX REPLACE "^tmm_" "" bare "${c_type}")
    pascal_case(name "${bare}")
    string(TOUPPER "TMM_${bare}_" own)
    set(prefixes TMM_)
    set(all_own TRUE)
    foreach(c_name IN LISTS c_names)
      if(NOT c_name MATCHES "^${own}")
        set(all_own FALSE)
      endif()
    endforeach()
    if(all_own)
      set(prefixes ${own} TMM_)
    endif()
  endif()

  set(names "")
  foreach(c_name IN LISTS c_names)
    set(short "")
    foreach(prefix IN LISTS prefixes)
      if(c_name MATCHES "^${prefix}(.+)$")
        set(short "${CMAKE_MATCH_1}")
        break()
      endif()
    endforeach()
    if(short STREQUAL "" OR NOT short MATCHES "^[A-Z][A-Z0-9_]*$")
      message(FATAL_ERROR "${HEADER}: ${c_name} in ${c_type}: no binding name (the name "
                          "after the prefix, ${prefixes}, must be UPPER_SNAKE_CASE and start "
                          "with a letter)")
    endif()
    if(short STREQUAL "UNKNOWN" OR short IN_LIST names)
      message(FATAL_ERROR "${HEADER}: ${c_name} in ${c_type}: its binding name ${short} is "
                          "taken")
    endif()
    list(APPEND names ${short})
    set(${c_type}_value_${short} ${value_${c_name}} PARENT_SCOPE)
    set(${c_type}_c_${short} ${c_name} PARENT_SCOPE)
    set(${c_type}_doc_${short} "${doc_${c_name}}" PARENT_SCOPE)
  endforeach()
  set(${c_type}_names ${names} PARENT_SCOPE)
  set(${c_type}_type ${name} PARENT_SCOPE)
endfunction()

file(READ "${HEADER}" header)
protect(header "${header}")
string(REGEX MATCHALL
       "typedef${space}enum${space}tmm_[a-z0-9_]+${space}{[^}]*}${space}tmm_[a-z0-9_]+${space}%%semicolon%%"
       blocks "${header}")
string(REGEX MATCHALL "typedef${space}enum" typedefs "${header}")
list(LENGTH blocks found)
list(LENGTH typedefs expected)
if(found EQUAL 0 OR NOT found EQUAL expected)
  # e.g. a '}' in a comment inside an enum: better no build than an enum left out
  message(FATAL_ERROR "${HEADER}: read ${found} of its ${expected} `typedef enum`s; each "
                      "must read `typedef enum tmm_x { ... } tmm_x;` with no '}' inside")
endif()
set(c_types "")
foreach(block IN LISTS blocks)
  string(REGEX MATCH "^typedef${space}enum${space}(tmm_[a-z0-9_]+)${space}{([^}]*)}${space}(tmm_[a-z0-9_]+)"
         unused "${block}")
  set(c_type "${CMAKE_MATCH_1}")
  set(body "${CMAKE_MATCH_2}")
  if(NOT CMAKE_MATCH_3 STREQUAL c_type)
    message(FATAL_ERROR "${HEADER}: typedef enum ${c_type} { ... } ${CMAKE_MATCH_3}: the tag "
                        "and the typedef name differ")
  endif()
  list(APPEND c_types ${c_type})
  parse_body(${c_type} "${body}")

  # The type's doc: the comment that ends just before the typedef.
  set(${c_type}_doc "")
  string(FIND "${header}" "${block}" at)
  string(SUBSTRING "${header}" 0 ${at} before)
  string(REGEX REPLACE "[ \t\r\n]+$" "" before "${before}")
  if(before MATCHES "\\*/$")
    string(FIND "${before}" "/*" start REVERSE)
    string(SUBSTRING "${before}" ${start} -1 comment)
    comment_text(${c_type}_doc "${comment}")
  endif()
endforeach()

# ---------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------

set(banner "Generated by bindings/generate_enums.cmake from include/tiledmm/tiledmm.h:
// edit the header, not this file.")

# The Java enum after its constants (@type@ and @c_type@ are substituted). Enums the
# library returns have UNKNOWN; those it only takes reject other numbers in of().
set(java_returned_tail [=[;

  /** The C value (UNKNOWN has none: -1). */
  final int value;

  @type@(int value) {
    this.value = value;
  }

  /** The constant of a C value: UNKNOWN for one these bindings do not know. */
  static @type@ of(int value) {
    switch (value) {
@cases@      default:
        return UNKNOWN;
    }
  }

  /** The C value to pass to the library: IllegalArgumentException for UNKNOWN. */
  int nativeValue() {
    if (this == UNKNOWN) {
      throw new IllegalArgumentException("@type@.UNKNOWN cannot be passed to the library");
    }
    return value;
  }
}
]=])
set(java_taken_tail [=[;

  /** The C value. */
  final int value;

  @type@(int value) {
    this.value = value;
  }

  /** The constant of a C value: IllegalArgumentException for an unknown one. */
  static @type@ of(int value) {
    switch (value) {
@cases@      default:
        throw new IllegalArgumentException("unknown @c_type@ value " + value);
    }
  }

  /** The C value to pass to the library. */
  int nativeValue() {
    return value;
  }
}
]=])

function(java_enum c_type)
  set(type ${${c_type}_type})
  set(text "// ${banner}\npackage org.tiledmm;\n\n/**\n")
  doc_escape(doc "${${c_type}_doc}")
  if(NOT doc STREQUAL "")
    wrap(lines " * " "${doc}")
    string(APPEND text "${lines} *\n")
  endif()
  set(about "<p>The C enum {@code ${c_type}} of tiledmm.h, one constant per value.")
  if(${c_type}_returned)
    string(APPEND about " A value the library returns that these bindings do not know (from a "
                        "newer library) reads as {@link #UNKNOWN}, which is never passed to "
                        "the library.")
  endif()
  wrap(lines " * " "${about}")
  string(APPEND text "${lines} */\npublic enum ${type} {\n")
  set(separator "")
  set(cases "")
  set(seen "")
  foreach(name IN LISTS ${c_type}_names)
    set(c "${${c_type}_c_${name}}")
    set(value ${${c_type}_value_${name}})
    doc_escape(doc "${${c_type}_doc_${name}}")
    if(doc STREQUAL "")
      set(doc "{@code ${c}}.")
    else()
      set(doc "{@code ${c}}: ${doc}")
    endif()
    wrap(lines "   * " "${doc}")
    string(APPEND text "${separator}  /**\n${lines}   */\n  ${name}(${value})")
    set(separator ",\n")
    if(NOT value IN_LIST seen)  # a C alias (a second name of a value) reads as the first
      list(APPEND seen ${value})
      string(APPEND cases "      case ${value}:\n        return ${name};\n")
    endif()
  endforeach()
  if(${c_type}_returned)
    string(APPEND text ",\n  /** A value of the loaded library that these bindings do not know. */\n"
                       "  UNKNOWN(-1)")
    string(CONFIGURE "${java_returned_tail}" tail @ONLY)
  else()
    string(CONFIGURE "${java_taken_tail}" tail @ONLY)
  endif()
  write_if_changed("${OUT}/${type}.java" "${text}${tail}")
endfunction()

# Appends the C# enum of `c_type` to the variable `var`.
function(csharp_enum var c_type)
  set(text "${${var}}")
  set(type ${${c_type}_type})
  doc_escape(doc "${${c_type}_doc}")
  if(doc STREQUAL "")
    set(doc "The C enum ${c_type}.")
  endif()
  wrap(lines "    /// " "<summary>${doc}</summary>")
  string(APPEND text "${lines}")
  set(remarks "The C enum ${c_type} of tiledmm.h.")
  if(${c_type}_returned)
    string(APPEND remarks " A value the library returns that this binding does not name (from "
                          "a newer library) keeps its number: Enum.IsDefined tells.")
  endif()
  wrap(lines "    /// " "<remarks>${remarks}</remarks>")
  string(APPEND text "${lines}    public enum ${type}\n    {\n")
  set(separator "")
  foreach(name IN LISTS ${c_type}_names)
    set(c "${${c_type}_c_${name}}")
    doc_escape(doc "${${c_type}_doc_${name}}")
    if(doc STREQUAL "")
      set(doc "${c}.")
    else()
      set(doc "${c}: ${doc}")
    endif()
    pascal_case(member "${name}")
    wrap(lines "        /// " "<summary>${doc}</summary>")
    string(APPEND text "${separator}${lines}        ${member} = ${${c_type}_value_${name}}")
    set(separator ",\n")
  endforeach()
  string(APPEND text "\n    }\n")
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

file(MAKE_DIRECTORY "${OUT}")
if(LANGUAGE STREQUAL "java")
  set(written "")
  foreach(c_type IN LISTS c_types)
    java_enum(${c_type})
    list(APPEND written "${OUT}/${${c_type}_type}.java")
  endforeach()
  file(GLOB existing "${OUT}/*.java")
  foreach(path IN LISTS existing)
    if(NOT path IN_LIST written)
      file(REMOVE "${path}")
    endif()
  endforeach()
else()
  set(text "// ${banner}\nnamespace TiledMM\n{\n")
  set(first TRUE)
  foreach(c_type IN LISTS c_types)
    if(NOT first)
      string(APPEND text "\n")
    endif()
    set(first FALSE)
    csharp_enum(text ${c_type})
  endforeach()
  string(APPEND text "}\n")
  write_if_changed("${OUT}/Enums.cs" "${text}")
endif()
