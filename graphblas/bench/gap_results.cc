// Per-vertex results of the GAP Benchmark Suite's kernels, for kernels.sh to compare with
// ours. GAP's binaries print times and statistics but not their results, so this program
// loads a graph with GAP's own Builder and calls GAP's kernel functions (DOBFS, Afforest,
// DeltaStep, PageRankPull), then writes "vertex value" lines to the file OUT (standard
// output carries GAP's own timing lines).
//
// kernels.sh compiles it against a GAP checkout (g++ -fopenmp -I$GAPBS_DIR/src): GAP's
// kernel sources are included from there with their `main` renamed, so the functions
// called are exactly the ones GAP's benchmark binaries time; nothing of GAP is kept here.
//
//   gap_results bfs  GRAPH.sg  OUT SOURCE       depth (from GAP's parent tree), -1 unreached
//   gap_results cc   GRAPH.sg  OUT              component label (GAP's: any member of the
//                                               component; compare as partitions)
//   gap_results sssp GRAPH.wsg OUT SOURCE DELTA distance (GAP's integer weights), -1 unreached
//   gap_results pr   GRAPH.sg  OUT ITERATIONS   PageRank score (float32), pr_spmv's kernel
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

// Each GAP kernel file defines main; renamed so that ours is the program's.
#define main gap_bfs_main
#include "bfs.cc"
#undef main
#define main gap_cc_main
#include "cc.cc"
#undef main
#define main gap_sssp_main
#include "sssp.cc"
#undef main
#define main gap_pr_spmv_main
#include "pr_spmv.cc"
#undef main

namespace {

// GAP's Builder reads the file named by its command-line object; give it one that names
// only the file (".sg"/".wsg" are read as they are: no symmetrizing, no relabelling).
template <typename GraphT, typename BuilderT>
GraphT LoadGraph(const char *path) {
  static char program[] = "gap_results", flag[] = "-f";
  static std::string file;
  file = path;
  char *argv[] = {program, flag, &file[0], nullptr};
  CLBase cli(3, argv, "gap_results");
  if (!cli.ParseArgs()) std::exit(2);
  BuilderT builder(cli);
  return builder.MakeGraph();
}

// BFS depth of every vertex from GAP's parent array: the source is its own parent and an
// unreached vertex has a negative parent. Depths are found by walking up to a vertex of
// known depth (each vertex is resolved once, so the walk is linear overall).
std::vector<int64_t> DepthsFromParents(const pvector<NodeID> &parent, NodeID source) {
  const int64_t n = parent.size();
  std::vector<int64_t> depth(n, -2);  // -2: not yet known
  depth[source] = 0;
  std::vector<NodeID> path;
  for (int64_t v = 0; v < n; v++) {
    if (depth[v] != -2) continue;
    if (parent[v] < 0) { depth[v] = -1; continue; }
    path.clear();
    NodeID u = v;
    while (depth[u] == -2) {
      path.push_back(u);
      u = parent[u];
    }
    int64_t d = depth[u];
    for (auto it = path.rbegin(); it != path.rend(); ++it) depth[*it] = ++d;
  }
  return depth;
}

int Usage() {
  std::fprintf(stderr,
               "usage: gap_results bfs GRAPH.sg OUT SOURCE | cc GRAPH.sg OUT | "
               "sssp GRAPH.wsg OUT SOURCE DELTA | pr GRAPH.sg OUT ITERATIONS\n");
  return 2;
}

}  // namespace

int main(int argc, char *argv[]) {
  if (argc < 4) return Usage();
  const std::string kernel = argv[1];
  const char *path = argv[2];
  argv++, argc--;  // now argv[1] = GRAPH, argv[2] = OUT, argv[3...] = the kernel's arguments
  if (!(kernel == "bfs" && argc == 4) && !(kernel == "cc" && argc == 3) &&
      !(kernel == "sssp" && argc == 5) && !(kernel == "pr" && argc == 4))
    return Usage();
  FILE *out = std::fopen(argv[2], "w");
  if (out == nullptr) {
    std::perror(argv[2]);
    return 1;
  }
  if (kernel == "bfs") {
    Graph g = LoadGraph<Graph, Builder>(path);
    NodeID source = std::atol(argv[3]);
    pvector<NodeID> parent = DOBFS(g, source);
    std::vector<int64_t> depth = DepthsFromParents(parent, source);
    for (int64_t v = 0; v < g.num_nodes(); v++) std::fprintf(out, "%ld %ld\n", (long)v, (long)depth[v]);
  } else if (kernel == "cc") {
    Graph g = LoadGraph<Graph, Builder>(path);
    pvector<NodeID> comp = Afforest(g);
    for (int64_t v = 0; v < g.num_nodes(); v++) std::fprintf(out, "%ld %ld\n", (long)v, (long)comp[v]);
  } else if (kernel == "sssp") {
    WGraph g = LoadGraph<WGraph, WeightedBuilder>(path);
    pvector<WeightT> dist = DeltaStep(g, std::atol(argv[3]), std::atol(argv[4]));
    for (int64_t v = 0; v < g.num_nodes(); v++)
      std::fprintf(out, "%ld %ld\n", (long)v, dist[v] == kDistInf ? -1L : (long)dist[v]);
  } else {
    Graph g = LoadGraph<Graph, Builder>(path);
    pvector<ScoreT> scores = PageRankPull(g, std::atoi(argv[3]), 0);
    for (int64_t v = 0; v < g.num_nodes(); v++) std::fprintf(out, "%ld %.9g\n", (long)v, (double)scores[v]);
  }
  return std::fclose(out) == 0 ? 0 : 1;
}
