package org.tiledmm;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads libtiledmm_jni.so (and through it libtiledmm.so.1), trying in order:
 *
 * <ol>
 *   <li>the directory in the system property {@code tiledmm.library.path};
 *   <li>{@code java.library.path} (and so LD_LIBRARY_PATH);
 *   <li>the Debian and RPM locations the packages install to;
 *   <li>copies packed inside the jar, extracted once to a temporary directory.
 * </ol>
 *
 * If all fail, the error lists every place that was tried and why it failed.
 */
final class NativeLoader {
  private static final String JNI = "libtiledmm_jni.so";
  private static final String CORE = "libtiledmm.so.1";
  private static final String[] SYSTEM_DIRS = {
    "/usr/lib/x86_64-linux-gnu/jni", "/usr/lib64/jni", "/usr/lib/jni", "/usr/local/lib/jni"
  };
  private static boolean loaded;

  private NativeLoader() {}

  static synchronized void load() {
    if (loaded) return;
    List<String> tried = new ArrayList<>();
    String dir = System.getProperty("tiledmm.library.path");
    if (dir != null && tryLoad(new File(dir, JNI), tried)) return;
    try {
      System.loadLibrary("tiledmm_jni");
      loaded = true;
      return;
    } catch (UnsatisfiedLinkError e) {
      tried.add("java.library.path=" + System.getProperty("java.library.path") + ": "
          + e.getMessage());
    }
    for (String d : SYSTEM_DIRS) {
      File f = new File(d, JNI);
      if (f.exists() && tryLoad(f, tried)) return;
      if (!f.exists()) tried.add(f + ": not found");
    }
    if (tryJar(tried)) return;
    throw new UnsatisfiedLinkError("tiledmm: cannot load its native library " + JNI
        + ". Set -Dtiledmm.library.path=DIR, add DIR to java.library.path, or install the"
        + " libtiledmm-java package. Tried:\n  " + String.join("\n  ", tried));
  }

  private static boolean tryLoad(File file, List<String> tried) {
    try {
      System.load(file.getAbsolutePath());
      loaded = true;
      return true;
    } catch (UnsatisfiedLinkError e) {
      tried.add(file + ": " + e.getMessage());
      return false;
    }
  }

  /** The jar may carry natives/linux-x86_64/{libtiledmm.so.1, libtiledmm_jni.so}. */
  private static boolean tryJar(List<String> tried) {
    String base = "/org/tiledmm/natives/" + platform() + "/";
    if (NativeLoader.class.getResource(base + JNI) == null) {
      tried.add("jar resource " + base + JNI + ": not packed in this jar");
      return false;
    }
    try {
      Path tmp = Files.createTempDirectory("tiledmm-natives");
      tmp.toFile().deleteOnExit();
      for (String name : new String[] {CORE, JNI}) {
        Path target = tmp.resolve(name);
        try (InputStream in = NativeLoader.class.getResourceAsStream(base + name)) {
          if (in == null) throw new IOException(base + name + " missing from the jar");
          Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        target.toFile().deleteOnExit();
      }
      // The JNI library finds libtiledmm.so.1 beside it ($ORIGIN); load it first anyway.
      return tryLoad(tmp.resolve(CORE).toFile(), tried) && tryLoad(tmp.resolve(JNI).toFile(), tried);
    } catch (IOException e) {
      tried.add("jar resource " + base + ": " + e.getMessage());
      return false;
    }
  }

  static String platform() {
    String os = System.getProperty("os.name").toLowerCase().startsWith("linux") ? "linux" : "other";
    String arch = System.getProperty("os.arch");
    return os + "-" + ("amd64".equals(arch) ? "x86_64" : arch);
  }
}
