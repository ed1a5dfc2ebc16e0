package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	commonutil "helm.sh/helm/v4/pkg/chart/common/util"
	loaderv2 "helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/yaml"
)

// cmdHelmTemplate renders one chart directory the way `helm template` does for a fresh
// install (Revision 1, IsInstall), values.yaml coalesced with the -f files in order.
// --repeat N renders N times (values coalescing and rendering, not loading) and reports the
// mean time on stderr, for hack/bench-helm.sh.
func cmdHelmTemplate(args []string) error {
	fs := flag.NewFlagSet("helm-template", flag.ExitOnError)
	var files multiFlag
	fs.Var(&files, "f", "values file (repeatable, later wins)")
	fs.Var(&files, "values", "values file (repeatable, later wins)")
	namespace := fs.String("namespace", "default", "release namespace")
	name := fs.String("name", "release-name", "release name")
	kubeVersion := fs.String("kube-version", "", "Capabilities.KubeVersion (default Helm's)")
	repeat := fs.Int("repeat", 1, "render N times and report the mean render time on stderr (benchmarks)")
	// The chart directory comes first, as with `helm template NAME CHART`; flags follow.
	if len(args) < 1 || len(args[0]) == 0 || args[0][0] == '-' {
		return fmt.Errorf("usage: helm-template CHARTDIR [flags]")
	}
	dir := args[0]
	_ = fs.Parse(args[1:])

	chrt, err := loaderv2.Load(dir)
	if err != nil {
		return fmt.Errorf("load chart %s: %w", dir, err)
	}
	vals := map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		cur := map[string]any{}
		if err := yaml.Unmarshal(b, &cur); err != nil {
			return fmt.Errorf("values file %s: %w", f, err)
		}
		vals = mergeMaps(vals, cur)
	}
	caps := *common.DefaultCapabilities
	if *kubeVersion != "" {
		kv, err := common.ParseKubeVersion(*kubeVersion)
		if err != nil {
			return err
		}
		caps.KubeVersion = *kv
	}
	opts := common.ReleaseOptions{Name: *name, Namespace: *namespace, Revision: 1, IsInstall: true}
	renderVals, err := commonutil.ToRenderValues(chrt, vals, opts, &caps)
	if err != nil {
		return fmt.Errorf("values: %w", err)
	}
	var out map[string]string
	start := time.Now()
	for i := 0; i < *repeat; i++ {
		if renderVals, err = commonutil.ToRenderValues(chrt, vals, opts, &caps); err != nil {
			return fmt.Errorf("values: %w", err)
		}
		if out, err = engine.Render(chrt, renderVals); err != nil {
			return err
		}
	}
	if *repeat > 1 {
		fmt.Fprintf(os.Stderr, "render: %d runs, %.3f ms each\n", *repeat,
			float64(time.Since(start).Microseconds())/1000/float64(*repeat))
	}
	crds := map[string]string{}
	for _, c := range chrt.CRDObjects() {
		crds[c.Filename] = string(c.File.Data)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(map[string]any{"templates": out, "crds": crds})
}

// mergeMaps is the -f merge of `helm template` (pkg/cli/values: later files win, maps merge,
// anything else replaces).
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if vm, ok := v.(map[string]any); ok {
			if bv, ok := out[k]; ok {
				if bm, ok := bv.(map[string]any); ok {
					out[k] = mergeMaps(bm, vm)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}
