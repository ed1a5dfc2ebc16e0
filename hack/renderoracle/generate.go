package main

import (
	"flag"
	"os"

	"istio.io/istio/operator/cmd/mesh"
	"istio.io/istio/operator/pkg/util/clog"
	"istio.io/istio/pkg/log"
)

// cmdGenerate is `istioctl manifest generate` without a cluster: mesh.ManifestGenerate is the
// command's own body (flag aliases, render.GenerateManifest, istioctl's object order and YAML
// re-marshalling), so the stream is byte for byte what istioctl prints.
func cmdGenerate(args []string) error {
	fs := flag.NewFlagSet("generate", flag.ExitOnError)
	var files, sets multiFlag
	fs.Var(&files, "f", "IstioOperator file (repeatable)")
	fs.Var(&files, "filename", "IstioOperator file (repeatable)")
	fs.Var(&sets, "set", "path=value override (repeatable)")
	force := fs.Bool("force", false, "proceed despite validation errors")
	revision := fs.String("revision", "", "control plane revision")
	manifests := fs.String("manifests", "", "charts and profiles directory")
	_ = fs.Parse(args)
	l := clog.NewConsoleLogger(os.Stdout, os.Stderr, log.RegisterScope("installer", "installer"))
	return mesh.ManifestGenerate(nil, &mesh.ManifestGenerateArgs{
		InFilenames:   files,
		Set:           sets,
		Force:         *force,
		Revision:      *revision,
		ManifestsPath: *manifests,
	}, l)
}
