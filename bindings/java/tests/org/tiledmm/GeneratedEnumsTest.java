package org.tiledmm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The enums that generate_enums.cmake wrote from tiledmm.h against SWIG's own reading of
 * the same header (its classes tmm_status, tmm_algorithm, ...): the same constants with
 * the same values, none missing, none extra.
 */
class GeneratedEnumsTest {
  static Stream<Arguments> enums() {
    return Stream.of(
        Arguments.of(tmm_status.class, Status.class, new String[] {"TMM_ERROR_", "TMM_"}, true),
        Arguments.of(tmm_layout.class, Layout.class, new String[] {"TMM_"}, false),
        Arguments.of(tmm_transpose.class, Transpose.class, new String[] {"TMM_"}, false),
        Arguments.of(tmm_backend.class, Backend.class, new String[] {"TMM_BACKEND_"}, true),
        Arguments.of(tmm_algorithm.class, Algorithm.class, new String[] {"TMM_ALGO_"}, true),
        Arguments.of(tmm_option.class, Option.class, new String[] {"TMM_OPTION_"}, false));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("enums")
  <E extends Enum<E>> void matchTheHeader(Class<?> swig, Class<E> generated, String[] prefixes,
      boolean returned) throws ReflectiveOperationException {
    Field value = generated.getDeclaredField("value");
    List<String> fromHeader = new ArrayList<>();
    for (Field field : swig.getDeclaredFields()) {
      if (!Modifier.isStatic(field.getModifiers()) || field.getType() != int.class) continue;
      String name = field.getName();
      for (String prefix : prefixes) {
        if (name.startsWith(prefix)) {
          name = name.substring(prefix.length());
          break;
        }
      }
      E constant = Enum.valueOf(generated, name);
      assertEquals(field.getInt(null), value.getInt(constant), field.getName());
      fromHeader.add(name);
    }
    List<String> inBinding = new ArrayList<>();
    for (E constant : generated.getEnumConstants()) inBinding.add(constant.name());
    if (returned) {
      assertTrue(inBinding.remove("UNKNOWN"), generated + " has UNKNOWN");
    }
    assertTrue(!fromHeader.isEmpty());
    assertEquals(fromHeader.size(), inBinding.size(),
        "header " + fromHeader + ", binding " + inBinding);
    assertTrue(inBinding.containsAll(fromHeader), "header " + fromHeader + ", binding "
        + Arrays.toString(generated.getEnumConstants()));
  }
}
