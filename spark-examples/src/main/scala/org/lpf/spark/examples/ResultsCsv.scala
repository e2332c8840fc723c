package org.lpf.spark.examples

import java.io.{File, PrintWriter}
import java.nio.channels.FileChannel
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, StandardCopyOption, StandardOpenOption}

import scala.jdk.CollectionConverters._

/**
 * A benchmark's CSV of result rows (header line, one line per row), shared by
 * Benchmark, CallBenchmark and KernelBenchmark: with `--append`, the rows an earlier run
 * wrote are kept beside this run's (the caller drops those this run replaces).
 */
object ResultsCsv {
  /** The rows of `file` (its header skipped) when `append` and it exists; else none. */
  def earlier[R](file: File, append: Boolean, parse: String => R): Vector[R] =
    if (append && file.exists())
      Files.readAllLines(file.toPath, StandardCharsets.UTF_8).asScala.drop(1).filter(_.nonEmpty).map(parse).toVector
    else Vector.empty

  /** Writes `header`, then each row as `line` gives it (whole: a new file moved in place). */
  def write[R](file: File, header: String, rows: Seq[R], line: R => String): Unit = {
    val part = new File(file.getPath + ".part")
    val w = new PrintWriter(part, "UTF-8")
    try { w.println(header); rows.foreach(r => w.println(line(r))) } finally w.close()
    Files.move(part.toPath, file.toPath, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
  }

  /**
   * The rows of `file` as `change` makes them from the rows it holds now, written back:
   * read, changed and written under an exclusive lock of `file.lock`, so that two
   * benchmark applications recording into one CSV at once (two harnesses, or a GraphX
   * run beside ours) never write back a stale copy over each other's rows.
   */
  def update[R](file: File, header: String, parse: String => R, line: R => String)(change: Vector[R] => Seq[R]): Seq[R] = {
    val lock = FileChannel.open(new File(file.getPath + ".lock").toPath, StandardOpenOption.CREATE, StandardOpenOption.WRITE)
    try {
      val held = lock.lock()
      try {
        val rows = change(earlier(file, append = true, parse))
        write(file, header, rows, line)
        rows
      } finally held.release()
    } finally lock.close()
  }
}
