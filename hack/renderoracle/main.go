// renderoracle runs upstream's install renderers (istio.io/istio at the version pinned in
// hack/lib/versions.sh, and the Helm engine it builds on) as the oracle of meshop's
// `manifest generate` and of meshop::helm. Built and run by hack/renderoracle.sh.
//
//	renderoracle generate [-f iop.yaml]... [--set k=v]... [--force] [--revision R] [--manifests DIR]
//	    what `istioctl manifest generate` prints: upstream's mesh.ManifestGenerate (which calls
//	    render.GenerateManifest and sorts the objects as istioctl does), no cluster, a
//	    multi-document YAML stream on stdout.
//	renderoracle helm-template CHARTDIR [-f values.yaml]... [--namespace ns] [--name release]
//	    [--kube-version v1.34.0]
//	    one chart rendered by Helm's engine (helm.sh/helm/v4, the one istioctl uses) with
//	    `helm template`'s defaults; stdout is one JSON object {"templates": {path: output},
//	    "crds": {path: content}}, paths as Helm keys them (chart/templates/x.yaml, subcharts
//	    as chart/charts/sub/templates/y.yaml). NOTES.txt is kept (callers skip it).
//	    A render error goes to stderr, exit 1, Helm's message verbatim.
package main

import (
	"fmt"
	"os"

	"istio.io/istio/pkg/log"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: renderoracle generate|helm-template [flags] (see main.go)")
	os.Exit(2)
}

func quietLogs() {
	o := log.DefaultOptions()
	o.OutputPaths = []string{"stderr"}
	o.ErrorOutputPaths = []string{"stderr"}
	o.SetDefaultOutputLevel("all", log.NoneLevel)
	for _, s := range log.Scopes() {
		s.SetOutputLevel(log.NoneLevel)
	}
	_ = log.Configure(o)
}

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint(*m) }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	quietLogs()
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "generate":
		err = cmdGenerate(args)
	case "helm-template":
		err = cmdHelmTemplate(args)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "renderoracle "+cmd+": "+err.Error())
		os.Exit(1)
	}
}
