{{/* Name of the chart, overridable with nameOverride. */}}
{{- define "steward.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the release's objects: the release name, with the chart name
appended unless the release name already contains it.
*/}}
{{- define "steward.fullname" -}}
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

{{/* Labels of every object. */}}
{{- define "steward.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "steward.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the controller's pods. */}}
{{- define "steward.selectorLabels" -}}
app.kubernetes.io/name: {{ include "steward.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Name of the controller's ServiceAccount. */}}
{{- define "steward.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "steward.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The controller's flags, from values. */}}
{{- define "steward.args" -}}
- controller
{{- if .Values.metrics.enabled }}
- --metrics-addr=:{{ .Values.metrics.port }}
{{- else }}
- --metrics-addr=0
{{- end }}
- --health-addr=:{{ .Values.healthProbe.port }}
- --enable-leader-election={{ .Values.leaderElection.enabled }}
{{- if .Values.leaderElection.enabled }}
- --leader-election-namespace={{ .Release.Namespace }}
{{- end }}
- --application-re-sync-period={{ .Values.controllerArgs.reSyncPeriod }}
- --unhealthy-requeue-base={{ .Values.controllerArgs.unhealthyRequeueBase }}
- --concurrent-reconciles={{ .Values.controllerArgs.concurrentReconciles }}
- --application-revision-limit={{ .Values.controllerArgs.revisionLimit }}
- --resource-tracker-compression={{ .Values.controllerArgs.trackerCompression }}
{{- with .Values.controllerArgs.cachedGVKs }}
- --optimize-cached-gvks={{ join "," . }}
{{- end }}
- --drift-detection={{ .Values.controllerArgs.driftDetection }}
- --apply-method={{ .Values.controllerArgs.applyMethod }}
- --definition-revisions={{ .Values.controllerArgs.definitionRevisions }}
- --definition-revision-limit={{ .Values.controllerArgs.definitionRevisionLimit }}
- --helm-chart-cache-bytes={{ int64 .Values.controllerArgs.helmChartCacheBytes }}
- --helm-fetch-timeout={{ .Values.controllerArgs.helmFetchTimeout }}
- --watch-full-read-period={{ .Values.controllerArgs.watchFullReadPeriod }}
- --cue-eval-timeout={{ .Values.controllerArgs.cueEvalTimeout }}
- --cue-eval-memory-limit={{ .Values.controllerArgs.cueEvalMemoryLimit }}
- --cue-evaluators={{ .Values.controllerArgs.cueEvaluators }}
- --max-render-objects={{ .Values.controllerArgs.maxRenderObjects }}
- --max-render-object-size={{ .Values.controllerArgs.maxRenderObjectSize }}
- --max-render-size={{ .Values.controllerArgs.maxRenderSize }}
- --max-step-action-result-size={{ .Values.controllerArgs.maxStepActionResultSize }}
- --max-step-result-size={{ .Values.controllerArgs.maxStepResultSize }}
- --step-action-workers={{ .Values.controllerArgs.stepActionWorkers }}
- --step-action-workers-per-namespace={{ .Values.controllerArgs.stepActionWorkersPerNamespace }}
- --kube-api-qps={{ .Values.kubeAPI.qps }}
- --kube-api-burst={{ .Values.kubeAPI.burst }}
- --system-definition-namespace={{ .Values.systemDefinitionNamespace }}
{{- with .Values.tenancy.defaultServiceAccount }}
- --default-service-account={{ . }}
{{- end }}
{{- if .Values.tenancy.noCrossNamespaceObjects }}
- --no-cross-namespace-objects=true
{{- end }}
{{- with .Values.egress.allow }}
- --egress-allow={{ join "," . }}
{{- end }}
{{- with .Values.egress.deny }}
- --egress-deny={{ join "," . }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . }}
{{- end }}
{{- end }}

{{/*
A map of labels or annotations, every value quoted: `--set a.b=true` gives
a boolean, which the API server refuses in metadata.
*/}}
{{- define "steward.stringMap" -}}
{{- $out := dict }}
{{- range $k, $v := . }}
{{- $_ := set $out $k (toString $v) }}
{{- end }}
{{- toYaml $out }}
{{- end }}
