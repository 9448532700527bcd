#!/usr/bin/env node
// A single-node Kubernetes cluster for running the chart for real (deploy/README.md, "A single-node
// cluster"):
//
//   node scripts/cluster.mjs up|down|status [--json]      (also: npm run cluster -- <cmd>)
//   node scripts/cluster.mjs install|uninstall [--json]   Support Desk on it (scripts/cluster/support-desk.mjs)
//
// `up` builds what is missing (kubelet, kube-scheduler, kube-controller-manager, kube-proxy,
// CoreDNS and kube-router from the Go module proxy into the machine cache, beside the deploy
// check's kube-apiserver, etcd and kubectl; containerd, runc, iptables, ipset and the CNI plugins
// from Debian), then starts etcd, the API server, the controller manager, the scheduler,
// containerd, the kubelet, kube-proxy, CoreDNS and kube-router's NetworkPolicy firewall inside a
// network namespace of the cluster's own (scripts/cluster/network.mjs), imports the sandbox and
// test images (scripts/cluster/images.mjs), waits for the node to be Ready, and
// prints the time it took and the kubeconfig path. `down` stops it all and removes its data.
// `status` exits 0 when every component runs and the node is Ready, else 3. `install` (on a cluster
// that is up) imports the images, starts the dependencies, creates the namespace and Secrets and
// installs the five releases with helm; `uninstall` removes them.
// Settings: SD_CLUSTER_DIR, SD_CLUSTER_INDEX (scripts/cluster/config.mjs). Root only.
import fs from 'node:fs';
import path from 'node:path';
import { clusterConfig } from './cluster/config.mjs';
import { down, status, up } from './cluster/lifecycle.mjs';
import { install, uninstall } from './cluster/support-desk.mjs';

async function main([cmd = 'status', ...rest]) {
  const c = clusterConfig();
  const json = rest.includes('--json');
  switch (cmd) {
    case 'up': {
      const state = await up(c);
      if (json) console.log(JSON.stringify(state));
      else console.log(`export KUBECONFIG=${state.kubeconfig}`);
      return 0;
    }
    case 'down':
      await down(c);
      return 0;
    case 'install': {
      const s = await status(c);
      if (!s.ready) throw new Error('the cluster is not up: npm run cluster -- up');
      const platform = await install(c, JSON.parse(fs.readFileSync(c.stateFile, 'utf8')));
      if (json) console.log(JSON.stringify(platform));
      else {
        console.log(`gateway: ${platform.gateway} (namespace ${platform.namespace})`);
        if (platform.adminKey) console.log(`admin API key (shown once): ${platform.adminKey}`);
      }
      return 0;
    }
    case 'uninstall':
      await uninstall(c);
      return 0;
    case 'status': {
      const s = await status(c);
      if (json) console.log(JSON.stringify(s));
      else {
        for (const x of s.components)
          console.log(`${x.name.padEnd(24)} ${x.pid ? `up (pid ${x.pid})` : 'down'}`);
        console.log(`node ${s.ready ? 'Ready' : 'not ready'}; kubeconfig ${s.kubeconfig}`);
      }
      return s.ready ? 0 : 3;
    }
    default:
      console.error(
        `usage: node ${path.relative(process.cwd(), process.argv[1])} up|down|status|install|uninstall [--json]`,
      );
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`[cluster] ${err.message}`);
    process.exit(1);
  },
);
