# A user's application against lpf-spark's GraphFrame, built without sbt or Maven (sourced
# by tests/spark/run.sh, which defines pass/fail/built, SPARK_HOME, $log4j and $limit):
#   graphframes_app_suite LOGDIR JAR POM
# takes the application sources FriendsApp.scala and FriendsJava.java from
# docs/graphframes.md (tests/spark/doc_snippets.py: the doc's text is what gets built),
# copies them into an empty temporary directory, compiles the Scala one with the Scala
# compiler the Spark installation ships (scala-compiler, scala-library, scala-reflect
# under SPARK_HOME/jars) and the Java one with javac, against Spark's jars and JAR only,
# packages each as a jar with `jar`, spark-submits each on local-cluster[2,1,1024] with
# --jars JAR and checks the lines it prints. Also checks that the doc's pom.xml and
# build.sbt name the artifact POM describes (group, artifact, version, Spark, Scala).
# Cases: graphframes-app/docs-builds-name-the-artifact, graphframes-app/scala,
# graphframes-app/java. The temporary directory is removed when every case passed.
graphframes_app_suite() {
    local logs=$1 jar=$2 pom=$3 here root app sjars cp scala ok=1
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    root=$(cd "$here/../.." && pwd)
    rm -rf "$logs"
    mkdir -p "$logs/doc"
    app=$(mktemp -d "${TMPDIR:-/tmp}/lpf-graphframes-app.XXXXXX")
    if ! python3 "$here/doc_snippets.py" "$logs/doc" "$root/docs/graphframes.md" >/dev/null 2>"$logs/extract.log" ||
        ! cp "$logs/doc/FriendsApp.scala" "$logs/doc/FriendsJava.java" "$app/" 2>>"$logs/extract.log"; then
        fail graphframes-app/extract-sources "$logs/extract.log"
        return
    fi
    if python3 - "$logs/doc/pom.xml" "$logs/doc/build.sbt" "$pom" >"$logs/builds.log" 2>&1 <<'PY'
import re, sys, xml.etree.ElementTree as ET
doc_pom, sbt, artifact_pom = sys.argv[1:]
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
text = lambda e, tag: e.findtext(f"m:{tag}", namespaces=ns)
ours = ET.parse(artifact_pom).getroot()
group, artifact, version = text(ours, "groupId"), text(ours, "artifactId"), text(ours, "version")
versions = {text(d, "artifactId"): text(d, "version") for d in ours.iterfind("m:dependencies/m:dependency", ns)}
scala_binary = artifact.rsplit("_", 1)[1]
spark = versions[f"spark-sql_{scala_binary}"]
deps = {(text(d, "groupId"), text(d, "artifactId")): (text(d, "version"), text(d, "scope"))
        for d in ET.parse(doc_pom).getroot().iterfind("m:dependencies/m:dependency", ns)}
print(deps)
assert deps[(group, artifact)] == (version, "provided"), deps
assert deps[("org.apache.spark", f"spark-sql_{scala_binary}")] == (spark, "provided"), deps
build = open(sbt, encoding="utf-8").read()
print(build)
assert f'"{group}" %% "{artifact.rsplit("_", 1)[0]}" % "{version}"' in build
assert f'"org.apache.spark" %% "spark-sql" % "{spark}" % "provided"' in build
assert re.search(r'^scalaVersion := "' + re.escape(versions["scala-library"]) + '"$', build, re.M), versions
PY
    then
        pass graphframes-app/docs-builds-name-the-artifact
    else
        fail graphframes-app/docs-builds-name-the-artifact "$logs/builds.log"
    fi

    sjars=$SPARK_HOME/jars
    scala=$(ls "$sjars"/scala-compiler-*.jar "$sjars"/scala-library-*.jar "$sjars"/scala-reflect-*.jar | paste -sd: -)
    cp="$sjars/*:$jar"
    # app_case NAME COMPILE... -- CLASS EXPECTED-LINE...: compile in $app/NAME, jar, submit, check.
    app_case() {
        local name=$1 class line missing=0
        shift
        local compile=()
        while [ "$1" != -- ]; do compile+=("$1"); shift; done
        shift
        class=$1
        shift
        mkdir -p "$app/$name/classes"
        if ! (cd "$app" && "${compile[@]}" -d "$name/classes") >"$logs/$name-compile.log" 2>&1 ||
            ! jar cf "$app/$name/app.jar" -C "$app/$name/classes" . >>"$logs/$name-compile.log" 2>&1; then
            fail "graphframes-app/$name (compile)" "$logs/$name-compile.log"
            ok=0
            return
        fi
        built "graphframes-app/$name-compiled-and-packaged"
        (cd "$app" && timeout -k 10 "$limit" "$SPARK_HOME/bin/spark-submit" --master "local-cluster[2,1,1024]" \
            --class "$class" --jars "$jar" --driver-memory 1g --conf spark.ui.enabled=false \
            --conf spark.barrier.sync.timeout=120s --driver-java-options "$log4j" \
            --conf "spark.executor.extraJavaOptions=$log4j" "$app/$name/app.jar") >"$logs/$name.log" 2>&1
        echo "    (exit $?; log $logs/$name.log)"
        for line in "$@"; do
            grep -qx "$line" "$logs/$name.log" || { echo "    missing line: $line"; missing=1; }
        done
        if [ "$missing" = 0 ]; then
            pass "graphframes-app/$name"
        else
            fail "graphframes-app/$name" "$logs/$name.log"
            ok=0
        fi
    }
    app_case scala java -cp "$scala" scala.tools.nsc.Main -classpath "$cp" FriendsApp.scala -- FriendsApp \
        "component Alice 0" "component Bob 0" "component Charlie 0" "component David 0" "component Esther 0" \
        "component Fanny 0" "component Gabby 6" "outDegree a 2" "outDegree b 1" "outDegree e 2" "outDegree f 1"
    app_case java javac -cp "$cp" FriendsJava.java -- FriendsJava \
        "component Alice 1" "component Bob 1" "component Charlie 1" "component David 4"
    if [ "$ok" = 1 ]; then
        rm -rf "$app"
    else
        echo "    sources and classes kept in $app"
    fi
}
