#!/usr/bin/env bash
# lpf-spark master | worker | submit ARGS... | any command
#   master  Spark standalone master on 7077 (web UI 8080)
#   worker  a worker of $SPARK_MASTER_URL with $WORKER_CORES cores and $WORKER_MEMORY
#   submit  spark-submit to $SPARK_MASTER_URL with the LPF bridge jar
set -euo pipefail
export SPARK_HOME=${SPARK_HOME:-$(cat /opt/spark-home)}
master_url=${SPARK_MASTER_URL:-spark://master:7077}
jars=/opt/lpf/build/libs
case "${1:-master}" in
    master)
        exec "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
            --host "$(hostname)" --port 7077 --webui-port 8080 ;;
    worker)
        exec "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
            --host "$(hostname)" --webui-port 8081 \
            --cores "${WORKER_CORES:-1}" --memory "${WORKER_MEMORY:-2g}" "$master_url" ;;
    submit)
        shift
        exec "$SPARK_HOME/bin/spark-submit" --master "$master_url" \
            --jars "$(ls "$jars"/lpf-spark_2.13-*.jar | grep -v -- -sources.jar)" \
            --conf spark.barrier.sync.timeout=300s \
            --conf spark.dynamicAllocation.enabled=false \
            "$@" ;;
    *)
        exec "$@" ;;
esac
