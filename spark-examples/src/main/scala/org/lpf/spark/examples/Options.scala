package org.lpf.spark.examples

import org.apache.spark.SparkContext
import org.apache.spark.rdd.RDD

/** Command-line options shared by the example applications. */
case class Options(
    scale: Option[Int] = None,
    input: Option[String] = None,
    edgeFactor: Int = 16,
    seed: Long = 1L,
    partitions: Int = 0,
    alpha: Double = 0.85,
    tol: Double = 1e-7,
    maxIter: Int = 1000,
    canonicalIterations: Option[Int] = None,
    checkpointDir: Option[String] = None,
    top: Int = 10,
    impls: Seq[String] = Seq("lpf", "canonical", "graphx"),
    out: String = "spark-examples/bench/results",
    name: Option[String] = None,
    append: Boolean = false,
    nativeRead: Boolean = false,
    threads: Int = 0) {

  /** The task slots of the application, the default number of partitions. */
  def parts(sc: SparkContext): Int = if (partitions > 0) partitions else math.max(sc.defaultParallelism, 1)

  /** The graph: generated R-MAT (deterministic) or read from a text file. */
  def edges(sc: SparkContext): RDD[(Long, Long)] = (scale, input) match {
    case (Some(s), None) => Graphs.rmat(sc, s, edgeFactor, seed, parts(sc))
    case (None, Some(path)) => Graphs.readEdges(sc, path, parts(sc))
    case _ => throw new IllegalArgumentException("give either --scale S (R-MAT) or --input FILE")
  }

  def describe: String = name.getOrElse(scale.map(s => s"kron$s").getOrElse(input.map(p => new java.io.File(p).getName).getOrElse("?")))
}

object Options {
  val Usage: String =
    """options: (--scale S [--edge-factor 16] [--seed 1] | --input FILE.mtx|FILE.edges) [--partitions P]
      |         [--alpha 0.85] [--tol 1e-7] [--max-iter 1000] [--canonical ITERS] [--checkpoint-dir DIR]
      |         [--top K] [--impls lpf,canonical,correct,graphx] [--out DIR] [--name NAME] [--append]
      |         [--native-read] [--threads T]""".stripMargin

  def parse(args: Array[String], app: String): Options = {
    def bad(msg: String): Nothing = {
      System.err.println(s"$app: $msg\n$Usage")
      sys.exit(2)
    }
    var o = Options()
    var i = 0
    def value(): String = {
      if (i + 1 >= args.length) bad(s"${args(i)} needs a value")
      i += 1
      args(i)
    }
    def num[T](f: String => T): T = { val v = value(); try f(v) catch { case _: NumberFormatException => bad(s"bad number $v") } }
    while (i < args.length) {
      args(i) match {
        case "--scale" => o = o.copy(scale = Some(num(_.toInt)))
        case "--input" => o = o.copy(input = Some(value()))
        case "--edge-factor" => o = o.copy(edgeFactor = num(_.toInt))
        case "--seed" => o = o.copy(seed = num(_.toLong))
        case "--partitions" => o = o.copy(partitions = num(_.toInt))
        case "--alpha" => o = o.copy(alpha = num(_.toDouble))
        case "--tol" => o = o.copy(tol = num(_.toDouble))
        case "--max-iter" => o = o.copy(maxIter = num(_.toInt))
        case "--canonical" => o = o.copy(canonicalIterations = Some(num(_.toInt)))
        case "--checkpoint-dir" => o = o.copy(checkpointDir = Some(value()))
        case "--top" => o = o.copy(top = num(_.toInt))
        case "--impls" => o = o.copy(impls = value().split(",").map(_.trim).filter(_.nonEmpty).toSeq)
        case "--out" => o = o.copy(out = value())
        case "--name" => o = o.copy(name = Some(value()))
        case "--append" => o = o.copy(append = true)
        case "--native-read" => o = o.copy(nativeRead = true)
        case "--threads" => o = o.copy(threads = num(_.toInt))
        case "-h" | "--help" => println(Usage); sys.exit(0)
        case other => bad(s"unknown option $other")
      }
      i += 1
    }
    if (o.scale.isDefined == o.input.isDefined) bad("give either --scale S or --input FILE")
    val known = Set("lpf", "canonical", "correct", "graphx")
    o.impls.find(x => !known(x)).foreach(x => bad(s"unknown implementation $x (known: ${known.mkString(", ")})"))
    o
  }
}
