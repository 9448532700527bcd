// The cluster's own images (scripts/cluster/images.mjs packs each command here alone, statically
// linked, into an OCI image): the pod sandbox ("pause") and the cluster test's web server. Only the
// standard library, so they build with no download.
module supportdesk.local/deploy-cluster/images

go 1.26.0
