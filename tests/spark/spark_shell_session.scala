// A spark-shell session as a user types it (fed on stdin by tests/spark/run.sh, case
// spark-shell): lines that hold the bridge's driver-side objects (an LpfGraph, PageRank
// results, settings, a kernel's DataFrame), then closures over REPL variables, which
// capture the lines they use, and closures using the objects themselves. Each check
// prints "SHELL name value"; run.sh compares the values. Issue 24 item 15: once a line held
// an LpfGraph, every later closure failed with "Task not serializable".
import org.lpf.spark._
val edges = spark.createDataFrame(Seq((1L, 2L), (2L, 3L), (3L, 1L), (3L, 4L))).toDF("src", "dst")
val graph = LpfGraph(edges)
val k = 3
println("SHELL closure-after-a-line-holding-an-LpfGraph " + sc.parallelize(1 to 4, 2).map(_ * k).collect().sum)
// One line (as a notebook cell or a pasted block is) holding an LpfGraph and a value that a
// later closure uses: the closure captures that line's object, the LpfGraph with it.
val cellGraph = LpfGraph(edges); val m = 5
println("SHELL closure-over-a-value-of-a-line-holding-an-LpfGraph " + sc.parallelize(1 to 4, 2).map(_ * m).collect().sum)
val settings = LpfSettings(slotWaitMs = 30000L)
val run = graph.pageRankRun(nprocs = 2, settings = settings)
val depths = graph.bfs(1, 2, 0, settings)
val rddRun = LpfPageRank.run(sc.parallelize(Seq((1L, 2L), (2L, 1L)), 2), nprocs = 2, settings = settings)
println("SHELL closure-after-lines-holding-results-and-settings " + sc.parallelize(1 to 4, 2).map(_ * k).collect().sum)
println("SHELL closure-using-the-objects " + sc.parallelize(1 to 4, 2).map(x =>
  x + run.iterations * 0 + rddRun.iterations * 0 + settings.threads + (if (graph.src == "src") 0 else 100)).collect().sum)
println("SHELL results-are-whole " + run.ranks.count() + "," + depths.count() + "," + rddRun.ranks.count())
