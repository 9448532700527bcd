{{/*
The resource name: the release name, so `helm install identity …` makes Service `identity`. As an
umbrella chart's subchart under an alias (`alias: identity`), the alias: several services then
share one release without their names colliding. `fullnameOverride` wins over both.
*/}}
{{- define "sd.fullname" -}}
{{- $name := .Release.Name -}}
{{- if ne .Chart.Name "support-desk-service" }}{{ $name = .Chart.Name }}{{ end -}}
{{- default $name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* app.kubernetes.io/name: the service, within the Support Desk platform. */}}
{{- define "sd.name" -}}
{{- printf "support-desk-%s" .Values.service -}}
{{- end -}}

{{- define "sd.version" -}}
{{- default .Chart.AppVersion .Values.image.tag | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels: name and instance only, so they never change across upgrades. */}}
{{- define "sd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "sd.labels" -}}
{{ include "sd.selectorLabels" . }}
app.kubernetes.io/component: {{ .Values.service }}
{{ include "sd.commonLabels" . }}
{{- end -}}

{{/* The bootstrap Job's labels: its own name, so no Deployment selector (PDB, policy) matches it. */}}
{{- define "sd.bootstrapLabels" -}}
app.kubernetes.io/name: support-desk-bootstrap
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: bootstrap
{{ include "sd.commonLabels" . }}
{{- end -}}

{{/* The streams Job's labels: its own name, like the bootstrap Job's. */}}
{{- define "sd.streamsLabels" -}}
app.kubernetes.io/name: support-desk-streams
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: streams
{{ include "sd.commonLabels" . }}
{{- end -}}

{{- define "sd.commonLabels" -}}
app.kubernetes.io/part-of: support-desk
app.kubernetes.io/version: {{ include "sd.version" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "sd.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end -}}

{{/* Whether an autoscaler (HPA or KEDA) owns the replica count. */}}
{{- define "sd.autoscaled" -}}
{{- if or .Values.autoscaling.enabled .Values.keda.enabled -}}true{{- end -}}
{{- end -}}

{{/* Environment from existing Secrets: one secretKeyRef per entry of secretEnv. */}}
{{- define "sd.secretEnv" -}}
{{- range .Values.secretEnv }}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ default $.Values.secretName .secret | required (printf "secretEnv %s: set secretName or secret" .env) }}
      key: {{ default .env .key }}
{{- end }}
{{- end -}}

{{/* The pod and container security contexts: the values' objects, restricted by default. */}}
{{- define "sd.podSecurityContext" -}}
{{- toYaml .Values.podSecurityContext -}}
{{- end -}}

{{- define "sd.containerSecurityContext" -}}
{{- toYaml .Values.securityContext -}}
{{- end -}}

{{/* The pods' ServiceAccount: the release's own, or the existing one `serviceAccount.name` names. */}}
{{- define "sd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "sd.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: name the existing ServiceAccount (serviceAccount.create is false)" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "sd.testSelectorLabels" -}}
app.kubernetes.io/name: support-desk-{{ .Values.service }}-test
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The chart test's labels: its own name, so no Deployment selector (PDB, policy) matches it. */}}
{{- define "sd.testLabels" -}}
{{ include "sd.testSelectorLabels" . }}
app.kubernetes.io/component: test
{{ include "sd.commonLabels" . }}
{{- end -}}

{{/* Checksums that roll the pods when their settings change. */}}
{{- define "sd.checksums" -}}
checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- $secrets := dict -}}
{{- range .Values.secretEnv -}}
{{- $name := default $.Values.secretName .secret -}}
{{- $found := lookup "v1" "Secret" $.Release.Namespace $name -}}
{{- if $found }}{{ $_ := set $secrets $name (get $found.metadata "resourceVersion" | default "") }}{{ end -}}
{{- end }}
checksum/secrets: {{ toJson $secrets | sha256sum }}
{{- end -}}

{{/*
Egress: DNS, each dependency on its port and only at the peers its `to` names, the Support Desk
services this one calls, and (webhooks) the internet without the non-public ranges.
*/}}
{{- define "sd.egressRules" -}}
{{- $np := .Values.networkPolicy -}}
- to:
    {{- toYaml $np.dns.to | nindent 4 }}
  ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
{{- range $np.egress }}
{{- if not .to }}
{{- fail (printf "networkPolicy.egress: port %v has no `to`: name the peers that serve it (a port alone would reach it anywhere)" .port) }}
{{- end }}
- to:
    {{- toYaml .to | nindent 4 }}
  ports:
    - port: {{ .port }}
      protocol: TCP
{{- end }}
{{- range $np.upstreams }}
- to:
    - podSelector:
        matchLabels:
          app.kubernetes.io/name: support-desk-{{ .service }}
  ports:
    - port: {{ .port }}
      protocol: TCP
{{- end }}
{{- with $np.internet }}
{{- if .enabled }}
{{- if not .clusterCidrs }}
{{- fail "networkPolicy.internet.clusterCidrs: list the cluster's pod and service ranges (kept out of the internet egress)" }}
{{- end }}
{{- $v4 := list "10.0.0.0/8" "172.16.0.0/12" "192.168.0.0/16" "169.254.0.0/16" "100.64.0.0/10" "127.0.0.0/8" }}
{{- $v6 := list "fc00::/7" "fe80::/10" "64:ff9b::/96" "64:ff9b:1::/48" }}
{{- range .clusterCidrs }}
{{- if contains ":" . }}{{ $v6 = append $v6 . }}{{ else }}{{ $v4 = append $v4 . }}{{ end }}
{{- end }}
- to:
    - ipBlock:
        cidr: 0.0.0.0/0
        except:
          {{- toYaml (uniq $v4) | nindent 10 }}
    - ipBlock:
        cidr: ::/0
        except:
          {{- toYaml (uniq $v6) | nindent 10 }}
  ports:
    {{- range .ports }}
    - port: {{ . }}
      protocol: TCP
    {{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
A monitor endpoint's interval, timeout and relabelings (the context: serviceMonitor or podMonitor
values, with the service under .service). `job` is the service's name, whatever the release is
called: the rules, the dashboard and docs/observability.md key on it.
*/}}
{{- define "sd.scrapeSettings" -}}
interval: {{ .interval }}
{{- with .scrapeTimeout }}
scrapeTimeout: {{ . }}
{{- end }}
relabelings:
  - action: replace
    targetLabel: job
    replacement: {{ .service }}
  {{- with .relabelings }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .metricRelabelings }}
metricRelabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
