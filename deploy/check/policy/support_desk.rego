# Support Desk's own rules for its Kubernetes manifests, run by `conftest test --combine` over
# every rendered document of a release (input: [{path, contents}]). Each rule names the object.
package main

import rego.v1

docs := [d.contents | some d in input; d.contents != null]

name(d) := sprintf("%s/%s", [d.kind, d.metadata.name])

required_labels := {
	"app.kubernetes.io/name",
	"app.kubernetes.io/instance",
	"app.kubernetes.io/component",
	"app.kubernetes.io/part-of",
	"app.kubernetes.io/version",
	"app.kubernetes.io/managed-by",
}

# Pods of their own: the chart test (a Helm `test` hook) is held to the same rules.
workload_kinds := {"Deployment", "Job", "Pod"}

workloads := [d | some d in docs; workload_kinds[d.kind]]

deployments := [d | some d in docs; d.kind == "Deployment"]

pod_spec(d) := d.spec if d.kind == "Pod"

pod_spec(d) := d.spec.template.spec if d.kind != "Pod"

pod_labels(d) := d.metadata.labels if d.kind == "Pod"

pod_labels(d) := d.spec.template.metadata.labels if d.kind != "Pod"

# --- labels -------------------------------------------------------------------------------------

deny contains msg if {
	some d in docs
	some label in required_labels
	not d.metadata.labels[label]
	msg := sprintf("%s: label %s is missing", [name(d), label])
}

deny contains msg if {
	some d in workloads
	some label in required_labels
	not pod_labels(d)[label]
	msg := sprintf("%s: pod label %s is missing", [name(d), label])
}

deny contains msg if {
	some d in deployments
	keys := {k | some k, _ in d.spec.selector.matchLabels}
	keys != {"app.kubernetes.io/name", "app.kubernetes.io/instance"}
	msg := sprintf("%s: the selector must be app.kubernetes.io/name and instance only, not %v", [name(d), keys])
}

# --- the restricted Pod Security Standard, and more -----------------------------------------------

deny contains msg if {
	some d in workloads
	not pod_spec(d).securityContext.runAsNonRoot == true
	msg := sprintf("%s: pod securityContext.runAsNonRoot must be true", [name(d)])
}

deny contains msg if {
	some d in workloads
	not pod_spec(d).securityContext.runAsUser > 0
	msg := sprintf("%s: pod securityContext.runAsUser must be a numeric non-root id", [name(d)])
}

deny contains msg if {
	some d in workloads
	not pod_spec(d).securityContext.seccompProfile.type == "RuntimeDefault"
	msg := sprintf("%s: pod seccompProfile must be RuntimeDefault", [name(d)])
}

deny contains msg if {
	some d in workloads
	not pod_spec(d).automountServiceAccountToken == false
	msg := sprintf("%s: automountServiceAccountToken must be false", [name(d)])
}

containers(d) := array.concat(object.get(pod_spec(d), "initContainers", []), pod_spec(d).containers)

deny contains msg if {
	some d in workloads
	some c in containers(d)
	not c.securityContext.allowPrivilegeEscalation == false
	msg := sprintf("%s: container %s must set allowPrivilegeEscalation: false", [name(d), c.name])
}

deny contains msg if {
	some d in workloads
	some c in containers(d)
	not c.securityContext.readOnlyRootFilesystem == true
	msg := sprintf("%s: container %s must set readOnlyRootFilesystem: true", [name(d), c.name])
}

deny contains msg if {
	some d in workloads
	some c in containers(d)
	not "ALL" in object.get(c, ["securityContext", "capabilities", "drop"], [])
	msg := sprintf("%s: container %s must drop ALL capabilities", [name(d), c.name])
}

deny contains msg if {
	some d in workloads
	some c in containers(d)
	count(object.get(c, ["securityContext", "capabilities", "add"], [])) > 0
	msg := sprintf("%s: container %s must add no capability", [name(d), c.name])
}

deny contains msg if {
	some d in workloads
	some c in containers(d)
	some kind in ["requests", "limits"]
	some resource in ["cpu", "memory"]
	not c.resources[kind][resource]
	msg := sprintf("%s: container %s has no %s.%s", [name(d), c.name, kind, resource])
}

# tini is the image's ENTRYPOINT: a `command` would replace it, and node would run as PID 1
# without a reaper and without the signal handling the shutdown sequence relies on.
deny contains msg if {
	some d in workloads
	some c in containers(d)
	c.command
	msg := sprintf("%s: container %s must not set command (tini must stay PID 1)", [name(d), c.name])
}

# Every node the chart runs (services, the streams and bootstrap Jobs) has --disable-proto=throw: a
# prototype-pollution bug in a dependency (a key `__proto__` reaching an assignment) throws instead
# of changing every object of the process.
deny contains msg if {
	some d in workloads
	some c in containers(d)
	c.args[0] == "node"
	not "--disable-proto=throw" in c.args
	msg := sprintf("%s: container %s must run node with --disable-proto=throw", [name(d), c.name])
}

# --- lifecycle -----------------------------------------------------------------------------------

deny contains msg if {
	some d in deployments
	some c in d.spec.template.spec.containers
	not c.startupProbe
	msg := sprintf("%s: container %s has no startupProbe", [name(d), c.name])
}

deny contains msg if {
	some d in deployments
	some c in d.spec.template.spec.containers
	not c.readinessProbe.httpGet.path == "/readyz"
	msg := sprintf("%s: container %s must be ready on /readyz", [name(d), c.name])
}

deny contains msg if {
	some d in deployments
	some c in d.spec.template.spec.containers
	not c.livenessProbe.httpGet.path == "/livez"
	msg := sprintf("%s: container %s must be live on /livez", [name(d), c.name])
}

config_of(d) := cm if {
	some c in d.spec.template.spec.containers
	some source in c.envFrom
	some cm in docs
	cm.kind == "ConfigMap"
	cm.metadata.name == source.configMapRef.name
}

pre_stop_seconds(c) := to_number(c.lifecycle.preStop.exec.command[1])

pre_stop_seconds(c) := c.lifecycle.preStop.sleep.seconds

# The grace period covers the preStop pause, the drain and the shutdown timeout of the code.
deny contains msg if {
	some d in deployments
	some c in d.spec.template.spec.containers
	cm := config_of(d)
	needed := pre_stop_seconds(c) + (to_number(cm.data.SHUTDOWN_DRAIN_MS) + to_number(cm.data.SHUTDOWN_TIMEOUT_MS)) / 1000
	d.spec.template.spec.terminationGracePeriodSeconds <= needed
	msg := sprintf("%s: terminationGracePeriodSeconds %v must exceed preStop + SHUTDOWN_DRAIN_MS + SHUTDOWN_TIMEOUT_MS (%v s)", [name(d), d.spec.template.spec.terminationGracePeriodSeconds, needed])
}

deny contains msg if {
	some d in deployments
	some c in d.spec.template.spec.containers
	not pre_stop_seconds(c)
	msg := sprintf("%s: container %s has no preStop pause", [name(d), c.name])
}

# --- one owner for the replica count; a PDB and a NetworkPolicy for every Deployment ------------

hpa_targets contains d.spec.scaleTargetRef.name if {
	some d in docs
	d.kind == "HorizontalPodAutoscaler"
	d.spec.scaleTargetRef.kind == "Deployment"
}

scaled_targets contains d.spec.scaleTargetRef.name if {
	some d in docs
	d.kind == "ScaledObject"
}

deny contains msg if {
	some target in hpa_targets & scaled_targets
	msg := sprintf("Deployment/%s: both an HPA and a KEDA ScaledObject scale it", [target])
}

deny contains msg if {
	some d in deployments
	d.metadata.name in (hpa_targets | scaled_targets)
	d.spec.replicas
	msg := sprintf("Deployment/%s: an autoscaler owns replicas; the Deployment must not set them", [d.metadata.name])
}

selects(selector, labels) if {
	every k, v in selector.matchLabels {
		labels[k] == v
	}
}

deny contains msg if {
	some d in deployments
	not has_pdb(d)
	msg := sprintf("%s: no PodDisruptionBudget selects its pods", [name(d)])
}

has_pdb(d) if {
	some p in docs
	p.kind == "PodDisruptionBudget"
	selects(p.spec.selector, d.spec.template.metadata.labels)
}

deny contains msg if {
	some d in workloads
	not has_network_policy(d)
	msg := sprintf("%s: no NetworkPolicy governs both ingress and egress of its pods", [name(d)])
}

has_network_policy(d) if {
	some p in docs
	p.kind == "NetworkPolicy"
	{"Ingress", "Egress"} == {t | some t in p.spec.policyTypes}
	selects(p.spec.podSelector, pod_labels(d))
}

deny contains msg if {
	some d in docs
	d.kind == "ServiceAccount"
	not d.automountServiceAccountToken == false
	msg := sprintf("%s: automountServiceAccountToken must be false", [name(d)])
}

deny contains msg if {
	some d in workloads
	some c in containers(d)
	c.securityContext.runAsNonRoot == false
	msg := sprintf("%s: container %s must not set runAsNonRoot: false", [name(d), c.name])
}

deny contains msg if {
	some d in workloads
	some c in containers(d)
	c.securityContext.runAsUser == 0
	msg := sprintf("%s: container %s must not run as root", [name(d), c.name])
}

# --- KEDA ----------------------------------------------------------------------------------------

nats_trigger_keys := {"natsServerMonitoringEndpoint", "account", "stream", "consumer", "lagThreshold"}

deny contains msg if {
	some d in docs
	d.kind == "ScaledObject"
	some t in d.spec.triggers
	t.type == "nats-jetstream"
	some key in nats_trigger_keys
	not t.metadata[key]
	msg := sprintf("%s: the nats-jetstream trigger needs %s", [name(d), key])
}

# --- egress: every peer named, the internet without the private and cluster ranges ---------------

network_policies := [d | some d in docs; d.kind == "NetworkPolicy"]

# A rule with ports only reaches those ports anywhere (another namespace's database, the cloud's
# metadata service): every egress rule names its destination.
deny contains msg if {
	some p in network_policies
	some i, rule in object.get(p.spec, "egress", [])
	count(object.get(rule, "to", [])) == 0
	msg := sprintf("%s: egress rule %d has no `to`: it reaches its ports anywhere", [name(p), i])
}

# What an egress to the whole internet must leave out: private, link-local (cloud metadata),
# shared (carrier-grade NAT) and loopback ranges, IPv4 and IPv6, and the NAT64 prefixes that
# lead back to them. (IPv4-mapped IPv6 is IPv4 on the wire, governed by the IPv4 block; the API
# server refuses it in an ipBlock.)
internet_excepts := {
	"0.0.0.0/0": {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10", "127.0.0.0/8"},
	"::/0": {"fc00::/7", "fe80::/10", "64:ff9b::/96", "64:ff9b:1::/48"},
}

deny contains msg if {
	some p in network_policies
	some rule in object.get(p.spec, "egress", [])
	some peer in object.get(rule, "to", [])
	required := internet_excepts[peer.ipBlock.cidr]
	missing := required - {e | some e in object.get(peer.ipBlock, "except", [])}
	count(missing) > 0
	msg := sprintf("%s: egress to %s must except %v", [name(p), peer.ipBlock.cidr, sort(missing)])
}

# The internet in one family and not the other: a rule that forgot IPv6 (or IPv4), whose
# private ranges would then depend on the cluster's defaults.
deny contains msg if {
	some p in network_policies
	some rule in object.get(p.spec, "egress", [])
	cidrs := {peer.ipBlock.cidr | some peer in object.get(rule, "to", []); peer.ipBlock.cidr}
	some cidr in cidrs
	internet_excepts[cidr]
	some other, _ in internet_excepts
	not other in cidrs
	msg := sprintf("%s: egress to %s without %s beside it", [name(p), cidr, other])
}

# --- the first admin's key ------------------------------------------------------------------------

# The bootstrap Job prints the first admin's key to its log, which outlives it wherever logs are
# shipped: the key must expire (`deskctl bootstrap --expires-in`).
deny contains msg if {
	some d in docs
	d.kind == "Job"
	some c in pod_spec(d).containers
	"bootstrap" in c.args
	not "--expires-in" in c.args
	msg := sprintf("%s: container %s runs deskctl bootstrap without --expires-in: the key it prints to the log would never expire", [name(d), c.name])
}
