{{/* The objects' name prefix: the release's name, as the kustomize base's `steward` for a release named steward. */}}
{{- define "steward.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains "steward" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-steward" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "steward.version" -}}
{{- .Values.image.tag | default .Chart.AppVersion -}}
{{- end -}}

{{/* The kustomize base's labels on every object; the version follows the image tag. */}}
{{- define "steward.labels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: steward
app.kubernetes.io/version: {{ include "steward.version" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
The selector of a component's pods (worker, starter): not the release's labels, so that a release may take over
the kustomize base's Deployments, whose selectors cannot change. One release per namespace.
*/}}
{{- define "steward.selectorLabels" -}}
app.kubernetes.io/name: steward
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "steward.componentLabels" -}}
{{ include "steward.selectorLabels" . }}
{{ include "steward.labels" .root }}
{{- end -}}

{{/* A container's image, environment and probes, the same for the worker and the starter but for the port. */}}
{{- define "steward.container" -}}
{{ include "steward.image" . }}
args: [{{ .component }}]
{{- include "steward.containerEnv" . | trim | nindent 0 }}
ports:
  - { name: http, containerPort: {{ .port }} }
livenessProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 20
readinessProbe:
  httpGet: { path: /readyz, port: http }
  periodSeconds: 5
  timeoutSeconds: 3
{{ include "steward.containerSecurityContext" . }}
{{- end -}}

{{- define "steward.image" -}}
image: {{ printf "%s:%s" .root.Values.image.repository (include "steward.version" .root) | quote }}
{{- with .root.Values.image.pullPolicy }}
imagePullPolicy: {{ . }}
{{- end }}
{{- end -}}

{{/* A component's environment: the API key's Secret, its own `env`, the values' extraEnv, then what it reads whole. */}}
{{- define "steward.containerEnv" -}}
{{- $apiKey := .root.Values.temporal.apiKey }}
{{- if or $apiKey.secretName .env .root.Values.extraEnv }}
env:
  {{- if $apiKey.secretName }}
  - name: TEMPORAL_API_KEY
    valueFrom: { secretKeyRef: { name: {{ $apiKey.secretName }}, key: {{ $apiKey.key }} } }
  {{- end }}
  {{- with .env }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
  {{- with .root.Values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}
envFrom:
  {{- /* cloud-api-adaptor's own, first: a key Steward's ConfigMap gives too is Steward's (docs/peer-pods.md). */}}
  {{- with .root.Values.cloud.cloudApiAdaptorConfigMap }}
  - configMapRef: { name: {{ . }}, optional: true }
  {{- end }}
  {{- if eq .component "worker" }}
  {{- with .root.Values.cloud.cloudApiAdaptorSecret }}
  - secretRef: { name: {{ . }}, optional: true }
  {{- end }}
  {{- end }}
  - configMapRef: { name: {{ include "steward.fullname" .root }} }
  {{- with .root.Values.secretName }}
  - secretRef: { name: {{ . }}, optional: true }
  {{- end }}
{{- end -}}

{{/* The restricted profile (deploy/manifests/steward.yaml says why each). */}}
{{- define "steward.containerSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities: { drop: [ALL] }
  seccompProfile: { type: RuntimeDefault }
{{- end -}}

{{/*
The worker pod's security context, mounts and volumes: its Deployment's, and the chart test's (tests/check.yaml), so
that `helm test` checks with what the workers have.
*/}}
{{- define "steward.workerPodSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 1000
  runAsGroup: 1000
  # The SSH key's group, so the node user reads it at mode 0440.
  fsGroup: 1000
  seccompProfile: { type: RuntimeDefault }
{{- end -}}

{{- define "steward.workerVolumeMounts" -}}
volumeMounts:
  - { name: tmp, mountPath: /tmp }
  {{- if and .Values.peerpods.enabled .Values.cloud.sshKeySecret }}
  - { name: ssh-key, mountPath: /home/node/.ssh, readOnly: true }
  {{- end }}
  {{- with include "steward.temporalTlsMount" . }}{{ . | nindent 2 }}{{ end }}
  {{- with .Values.extraVolumeMounts }}{{ toYaml . | nindent 2 }}{{ end }}
{{- end -}}

{{- define "steward.workerVolumes" -}}
volumes:
  - name: tmp
    emptyDir: { sizeLimit: 256Mi }
  {{- if and .Values.peerpods.enabled .Values.cloud.sshKeySecret }}
  - name: ssh-key
    secret: { secretName: {{ .Values.cloud.sshKeySecret }}, optional: true, defaultMode: 288 } # 0440
  {{- end }}
  {{- with include "steward.temporalTlsVolume" . }}{{ . | nindent 2 }}{{ end }}
  {{- with .Values.extraVolumes }}{{ toYaml . | nindent 2 }}{{ end }}
{{- end -}}

{{/* Temporal's mTLS Secret (temporal.tls), mounted where the ConfigMap's TEMPORAL_TLS_* files are; empty without. */}}
{{- define "steward.temporalTlsMount" -}}
{{- if .Values.temporal.tls.secretName -}}
- { name: temporal-tls, mountPath: /etc/steward/temporal-tls, readOnly: true }
{{- end -}}
{{- end -}}

{{- define "steward.temporalTlsVolume" -}}
{{- with .Values.temporal.tls.secretName -}}
- name: temporal-tls
  secret: { secretName: {{ . }} }
{{- end -}}
{{- end -}}

{{/*
The pods' common spec: the MidoNet profile's host network, priority and tolerations (deploy/manifests/steward.yaml
says why; none without MidoNet), the ServiceAccount, image pull Secrets, the values' scheduling, spread over nodes
where it can be unless the values say how.
*/}}
{{- define "steward.podCommon" -}}
{{- $v := .root.Values }}
{{- if $v.midonet.enabled }}
hostNetwork: true
dnsPolicy: Default
priorityClassName: {{ $v.priorityClassName | default "system-cluster-critical" }}
tolerations: [{ operator: Exists }]
{{- else }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
serviceAccountName: {{ include "steward.fullname" .root }}
automountServiceAccountToken: true
{{- with $v.image.pullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
topologySpreadConstraints:
{{- if $v.topologySpreadConstraints }}
  {{- toYaml $v.topologySpreadConstraints | nindent 2 }}
{{- else }}
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "steward.selectorLabels" . | nindent 8 }}
{{- end }}
{{- end -}}

{{/* A component's PodDisruptionBudget, metrics Service and the ingress half of its NetworkPolicy's spec. */}}
{{- define "steward.componentObjects" -}}
{{- $name := printf "%s-%s" (include "steward.fullname" .root) .component -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $name }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "steward.componentLabels" . | nindent 4 }}
spec:
  maxUnavailable: 1
  selector:
    matchLabels:
      {{- include "steward.selectorLabels" . | nindent 6 }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "steward.componentLabels" . | nindent 4 }}
spec:
  selector:
    {{- include "steward.selectorLabels" . | nindent 4 }}
  ports:
    - { name: http, port: {{ .port }}, targetPort: http }
{{- with include "steward.networkPolicy" . }}
---
{{ . }}
{{- end }}
{{- end -}}

{{/*
A component's NetworkPolicy, rendered without MidoNet only (host-network pods are not subject to one): in, only its
`port` (none without); out, DNS, Temporal, the API server and its `egressPorts`. The helm test Pod gets the worker's
egress, so that it reaches only what a worker may.
*/}}
{{- define "steward.networkPolicy" -}}
{{- if and .root.Values.networkPolicy.enabled (not .root.Values.midonet.enabled) -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "steward.fullname" .root }}-{{ .component }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "steward.componentLabels" . | nindent 4 }}
  {{- with .annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  podSelector:
    matchLabels:
      {{- include "steward.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress, Egress]
  {{- if .port }}
  ingress:
    - ports: [{ protocol: TCP, port: {{ .port }} }]
  {{- else }}
  ingress: []
  {{- end }}
  egress:
    - to:
        - namespaceSelector: { matchLabels: { kubernetes.io/metadata.name: kube-system } }
          podSelector: { matchLabels: { k8s-app: kube-dns } }
      ports: [{ protocol: UDP, port: 53 }, { protocol: TCP, port: 53 }]
    # Temporal, then the API server (and the cloud's HTTPS API), then the component's own backends.
    - ports: [{ protocol: TCP, port: 7233 }]
    - ports: [{ protocol: TCP, port: 443 }, { protocol: TCP, port: 6443 }]
    {{- range .egressPorts }}
    - ports: [{ protocol: TCP, port: {{ . }} }]
    {{- end }}
{{- end }}
{{- end -}}

{{/* The worker's own backends beyond Temporal and HTTPS: libvirt over SSH. */}}
{{- define "steward.workerEgressPorts" -}}
[22]
{{- end -}}
