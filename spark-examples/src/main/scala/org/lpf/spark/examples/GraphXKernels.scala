package org.lpf.spark.examples

import scala.reflect.ClassTag

import org.apache.spark.graphx.Graph
import org.apache.spark.graphx.lib.{LabelPropagation, ShortestPaths}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types.{DataType, LongType, StructField, StructType}
import org.apache.spark.storage.StorageLevel

/**
 * GraphX's counterparts of LPF's kernels as the benchmarks run them (KernelBenchmark,
 * ScaleBenchmark): each result as a GraphX user turns it into a DataFrame, persisted and
 * counted.
 */
object GraphXKernels {
  /** A result RDD as a DataFrame (id: bigint, `name`: `t`), persisted and counted. */
  def materialised(spark: SparkSession, rows: RDD[Row], name: String, t: DataType): DataFrame = {
    val df = spark.createDataFrame(rows, StructType(Seq(StructField("id", LongType, nullable = false),
      StructField(name, t, nullable = false)))).persist(StorageLevel.MEMORY_AND_DISK)
    df.count()
    df
  }

  /** BFS depths from `source` following edges forward (ShortestPaths on the reversed graph); Long.MaxValue unreached. */
  def bfs[VD: ClassTag, ED: ClassTag](spark: SparkSession, g: Graph[VD, ED], source: Long): DataFrame =
    materialised(spark, ShortestPaths.run(g.reverse, Seq(source)).vertices
      .map { case (v, hops) => Row(v, hops.get(source).map(_.toLong).getOrElse(Long.MaxValue)) }, "depth", LongType)

  /** Connected components: the smallest vertex id of each. */
  def wcc[VD: ClassTag, ED: ClassTag](spark: SparkSession, g: Graph[VD, ED]): DataFrame =
    materialised(spark, g.connectedComponents().vertices.map { case (v, c) => Row(v, c) }, "component", LongType)

  /** GraphX's label propagation, `iterations` supersteps. */
  def cdlp[VD: ClassTag, ED: ClassTag](spark: SparkSession, g: Graph[VD, ED], iterations: Int): DataFrame =
    materialised(spark, LabelPropagation.run(g, iterations).vertices.map { case (v, l) => Row(v, l) }, "label", LongType)
}
