# Elasticsearch 8 with Lectern's analysis plugin (Porter2 stemmer, apostrophe split), built from
# mappings/esplugin with the image's own JDK.
FROM docker.elastic.co/elasticsearch/elasticsearch:8.19.21
COPY --chown=elasticsearch mappings/esplugin /tmp/esplugin
RUN ES_JAVA_HOME=/usr/share/elasticsearch/jdk bash /tmp/esplugin/build.sh /usr/share/elasticsearch /tmp/esplugin-build > /tmp/zip-path \
 && bin/elasticsearch-plugin install --batch "file://$(cat /tmp/zip-path)" \
 && rm -rf /tmp/esplugin /tmp/esplugin-build /tmp/zip-path
