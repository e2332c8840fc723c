package org.lpf.spark.examples

import java.io.{File, PrintWriter}
import java.nio.charset.StandardCharsets
import java.nio.file.Files

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

  /** Writes `header`, then each row as `line` gives it. */
  def write[R](file: File, header: String, rows: Seq[R], line: R => String): Unit = {
    val w = new PrintWriter(file, "UTF-8")
    try { w.println(header); rows.foreach(r => w.println(line(r))) } finally w.close()
  }
}
