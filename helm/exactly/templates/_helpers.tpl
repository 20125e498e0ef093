{{/* Names and labels. */}}
{{- define "exactly.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "exactly.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "exactly.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "exactly.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "exactly.selectorLabels" -}}
app.kubernetes.io/name: {{ include "exactly.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "exactly.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "exactly.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "exactly.secretName" -}}
{{- .Values.sasl.existingSecret | default (printf "%s-kafka" (include "exactly.fullname" .)) }}
{{- end }}

{{/* The port of config.metrics.listen ("host:port"), which the container, Service and probes use. */}}
{{- define "exactly.metricsPort" -}}
{{- $listen := .Values.config.metrics.listen | default "" | toString }}
{{- if not (regexMatch ":[0-9]+$" $listen) }}
{{- fail (printf "config.metrics.listen must be \"host:port\" (the probes and the Service use it), not %q" $listen) }}
{{- end }}
{{- $port := regexFind "[0-9]+$" $listen | atoi }}
{{- if or (lt $port 1) (gt $port 65535) }}
{{- fail (printf "config.metrics.listen: port %d is not from 1 to 65535 (0, any free port, cannot be probed)" $port) }}
{{- end }}
{{- $port }}
{{- end }}

{{/* shutdown.timeout_ms rounded up to seconds, plus terminationGraceExtraSeconds. */}}
{{- define "exactly.terminationGracePeriodSeconds" -}}
{{- $timeoutMs := int64 (.Values.config.shutdown.timeout_ms | default 30000) }}
{{- add (div (add $timeoutMs 999) 1000) (int64 .Values.terminationGraceExtraSeconds) }}
{{- end }}

{{/*
The config as rendered: .Values.config with what the chart owns merged in (the required keys
checked, SASL, static membership, the plugin folder).
*/}}
{{- define "exactly.config" -}}
{{- $config := deepCopy .Values.config }}
{{- $_ := required "config.kafka.bootstrap_servers is required" $config.kafka.bootstrap_servers }}
{{- range $key := list "input_topic" "output_topic" "group_id" }}
{{- $_ := required (printf "config.pipeline.%s is required" $key) (get $config.pipeline $key) }}
{{- end }}
{{- $rdk := $config.librdkafka | default dict }}
{{- $common := get $rdk "common" | default dict }}
{{- $consumer := get $rdk "consumer" | default dict }}
{{- if .Values.sasl.enabled }}
{{- $_ := set $common "security.protocol" .Values.sasl.securityProtocol }}
{{- $_ := set $common "sasl.mechanism" .Values.sasl.mechanism }}
{{- $_ := set $common "sasl.username" (required "sasl.username is required with sasl.enabled" .Values.sasl.username) }}
{{- $_ := set $common "sasl.password" "${KAFKA_PASSWORD}" }}
{{- end }}
{{- if and .Values.staticMembership (eq .Values.kind "StatefulSet") (not (hasKey $consumer "group.instance.id")) }}
{{- $_ := set $consumer "group.instance.id" "${POD_NAMESPACE}.${POD_NAME}" }}
{{- end }}
{{- $_ := set $rdk "common" $common }}
{{- $_ := set $rdk "consumer" $consumer }}
{{- $_ := set $config "librdkafka" $rdk }}
{{- $transform := $config.transform | default dict }}
{{- if and (or .Values.plugins.image.repository .Values.plugins.volume) (not $transform.plugin_dir) }}
{{- $_ := set $transform "plugin_dir" "/usr/lib/exactly/plugins" }}
{{- end }}
{{- $_ := set $config "transform" $transform }}
{{- toJson $config }}
{{- end }}

{{/*
A TOML key: bare when it can be, else a quoted string. JSON's string escapes are TOML's; only
Go's escaping of < > & as \u003c \u003e \u0026 is undone, for the reader.
*/}}
{{- define "exactly.toml.key" -}}
{{- if regexMatch "^[A-Za-z0-9_-]+$" . }}{{ . }}{{ else }}{{ include "exactly.toml.string" . }}{{ end }}
{{- end }}

{{- define "exactly.toml.string" -}}
{{- toJson . | replace "\\u003c" "<" | replace "\\u003e" ">" | replace "\\u0026" "&" }}
{{- end }}

{{/* A TOML value: strings as basic strings, numbers, booleans, arrays of those. */}}
{{- define "exactly.toml.value" -}}
{{- $v := .value }}
{{- if kindIs "slice" $v }}
{{- $items := list }}
{{- range $v }}
{{- if or (kindIs "map" .) (kindIs "slice" .) }}
{{- fail (printf "config: %s: arrays of tables or of arrays are not supported" $.key) }}
{{- end }}
{{- $items = append $items (include "exactly.toml.value" (dict "key" $.key "value" .)) }}
{{- end }}
{{- printf "[%s]" (join ", " $items) }}
{{- else if kindIs "float64" $v }}
{{- /* Every number went through JSON (see exactly.config): whole ones are TOML integers. */}}
{{- if eq $v (floor $v) }}{{ int64 $v }}{{ else }}{{ $v }}{{ end }}
{{- else if kindIs "string" $v }}
{{- include "exactly.toml.string" $v }}
{{- else }}
{{- toJson $v }}
{{- end }}
{{- end }}

{{/*
A TOML table and its sub-tables: dict "path" (list of names) "table" (map). Keys in order, null
values left out, a map value becomes a [sub.table] after the keys; a table holding only tables
([librdkafka]) gets no header of its own.
*/}}
{{- define "exactly.toml.table" -}}
{{- $names := list }}
{{- range .path }}{{ $names = append $names (include "exactly.toml.key" .) }}{{ end }}
{{- $lines := list }}
{{- $tables := list }}
{{- range $key, $value := .table }}
{{- if kindIs "map" $value }}
{{- $tables = append $tables $key }}
{{- else if not (kindIs "invalid" $value) }}
{{- $lines = append $lines (printf "%s = %s" (include "exactly.toml.key" $key) (include "exactly.toml.value" (dict "key" $key "value" $value))) }}
{{- end }}
{{- end }}
{{- $blocks := list }}
{{- if or $lines (not $tables) }}
{{- $blocks = append $blocks (prepend $lines (printf "[%s]" (join "." $names)) | join "\n") }}
{{- end }}
{{- range $key := $tables }}
{{- $blocks = append $blocks (include "exactly.toml.table" (dict "path" (append $.path $key) "table" (get $.table $key))) }}
{{- end }}
{{- join "\n\n" $blocks }}
{{- end }}

{{/* config.toml: the tables in the order of config/exactly.example.toml, then any other. */}}
{{- define "exactly.configToml" -}}
{{- $config := include "exactly.config" . | fromJson }}
{{- $order := list "kafka" "pipeline" "transactions" "shutdown" "transform" "log" "quarantine" "metrics" "health" "librdkafka" }}
{{- $names := list }}
{{- range $order }}{{ if hasKey $config . }}{{ $names = append $names . }}{{ end }}{{ end }}
{{- range $name, $_ := $config }}{{ if not (has $name $order) }}{{ $names = append $names $name }}{{ end }}{{ end }}
{{- $blocks := list "# Rendered by the Helm chart from .Values.config; config/exactly.example.toml has every key." }}
{{- range $names }}
{{- $blocks = append $blocks (include "exactly.toml.table" (dict "path" (list .) "table" (get $config .))) }}
{{- end }}
{{- join "\n\n" $blocks }}
{{- end }}
