#!/bin/bash
exec java -Xmx128m -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile=/opt/kafka/bin/log4j2.properties \
  -cp '/opt/kafka/libs/*' org.apache.kafka.tools.TopicCommand "$@"
