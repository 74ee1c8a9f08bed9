{{/* Name of the chart, or nameOverride. */}}
{{- define "fleetmq.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Name of the release's objects: fullnameOverride, or release name and chart name. */}}
{{- define "fleetmq.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels that select the nodes; never change once installed. */}}
{{- define "fleetmq.selectorLabels" -}}
app.kubernetes.io/name: {{ include "fleetmq.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "fleetmq.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "fleetmq.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: broker
{{- end }}

{{- define "fleetmq.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "fleetmq.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Whether a listener needs the certificate: TLS or secure WebSocket enabled. */}}
{{- define "fleetmq.tlsNeeded" -}}
{{- if or .Values.listeners.tls.enabled .Values.listeners.wss.enabled }}true{{ end }}
{{- end }}

{{/* Whether fleetmq.yml overrides are given (inline or as an existing ConfigMap). */}}
{{- define "fleetmq.hasConfig" -}}
{{- if or .Values.existingConfigMap (not (empty .Values.config)) }}true{{ end }}
{{- end }}

{{- define "fleetmq.configMapName" -}}
{{- .Values.existingConfigMap | default (printf "%s-config" (include "fleetmq.fullname" .)) }}
{{- end }}

{{/*
terminationGracePeriodSeconds: the preStop pause, the broker's shutdown timeout and a margin, so a
node handing its clients over is never killed.
*/}}
{{- define "fleetmq.terminationGracePeriodSeconds" -}}
{{- add (int .Values.shutdown.preStopSeconds) (int .Values.shutdown.timeoutSeconds) (int .Values.shutdown.marginSeconds) }}
{{- end }}

{{/*
REDIS_URL's value: the URL from values with "$(FLEETMQ_REDIS_PASSWORD)" put in as its password, for
Kubernetes to replace with the Secret's value when the container starts.
*/}}
{{- define "fleetmq.redisUrl" -}}
{{- $url := required "redis.url is required (redis://, rediss://, redis-sentinel://, redis-cluster:// or rediss-cluster://)" .Values.redis.url }}
{{- if not (regexMatch "^(redis|rediss|redis-sentinel|redis-cluster|rediss-cluster)://" $url) }}
{{- fail (printf "redis.url must start with redis://, rediss://, redis-sentinel://, redis-cluster:// or rediss-cluster://, not %q" $url) }}
{{- end }}
{{- if contains "@" $url }}
{{- fail "redis.url must not carry credentials: give the password with redis.auth.existingSecret, or the whole URL with redis.urlSecret" }}
{{- end }}
{{- if .Values.redis.auth.existingSecret }}
{{- $parts := splitn "://" 2 $url }}
{{- printf "%s://%s:$(FLEETMQ_REDIS_PASSWORD)@%s" $parts._0 .Values.redis.auth.username $parts._1 }}
{{- else }}
{{- $url }}
{{- end }}
{{- end }}
