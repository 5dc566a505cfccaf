#!/bin/bash
# Writes /opt/kafka/config/server.properties from the KAFKA_* environment (as the apache/kafka
# image: KAFKA_FOO_BAR is foo.bar, `___` is `-`, `__` is `_`), formats the log dir once, runs Kafka.
set -euo pipefail
props=/opt/kafka/config/server.properties
: "${KAFKA_LOG_DIRS:=/var/lib/kafka/data}"
: "${CLUSTER_ID:=5L6g3nShT-eMCtK--X86sw}"
export KAFKA_LOG_DIRS
: >"$props"
while IFS='=' read -r name value; do
  case "$name" in
    KAFKA_HEAP_OPTS | KAFKA_JVM_OPTS) continue ;;
    KAFKA_*) ;;
    *) continue ;;
  esac
  key=${name#KAFKA_}
  key=${key//___/-}
  key=${key//__/@}
  key=${key//_/.}
  key=${key//@/_}
  printf '%s=%s\n' "${key,,}" "$value" >>"$props"
done < <(env)
grep -q '^controller.quorum.voters=' "$props" || standalone=--standalone
jvm=(${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} ${KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1}
  -Djava.awt.headless=true -Dlog4j2.configurationFile=/opt/kafka/bin/log4j2.properties)
java "${jvm[@]}" -cp '/opt/kafka/libs/*' kafka.tools.StorageTool format --ignore-formatted \
  -t "$CLUSTER_ID" -c "$props" ${standalone:-}
exec java "${jvm[@]}" -cp '/opt/kafka/libs/*' kafka.Kafka "$props"
