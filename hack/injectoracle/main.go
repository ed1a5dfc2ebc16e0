// injectoracle runs upstream Istio's sidecar injector (istio.io/istio at the version pinned in
// hack/lib/versions.sh) as a test oracle for meshop. Built and run by hack/injectoracle.sh.
//
//	injectoracle settings --out DIR [--istio DIR]
//	    Renders the injector settings of every TestInjection case (see settings.go) and
//	    self-checks them against the goldens.
//	injectoracle inject --settings DIR/settings/<id> [--native auto|true|false]
//	    [--revision default] [--compliance P] [--openshift] [--path /inject/...]
//	    [--nodes v1.33.0,v1.34.0]
//	    or --fixtures DIR --case NAME instead of --settings/--native/--compliance/--openshift
//	    stdin: JSON lines {"namespace": "...", "pod": {...}}; stdout: one JSON line per input,
//	    {"pod": {...}, "patch": [...]} | {"error": "..."} | {"skipped": true}
//	injectoracle serve --settings DIR --cert F --key F --addr 127.0.0.1:PORT [same flags]
//	    upstream's webhook over HTTPS on /inject (and /inject/...)
//	injectoracle normalize [--blank-fieldref]
//	    stdin: JSON lines, each a Pod; stdout: {"pod": <normalised>} | {"error": "..."}: the
//	    comparison form of TestInjection's webhook path (decoded into corev1.Pod and
//	    re-marshalled, sidecar.istio.io/status removed)
//	injectoracle retype
//	    stdin: JSON lines {"yaml": "<one YAML document>"}; stdout: {"yaml": ..., "typed": bool}
//	    | {"error": "..."}: the document as upstream's kube-inject writes an object it decoded
//	    (typed re-encoding, see retype.go)
//	injectoracle genpods --seed N --count K
//	    random pods (JSON lines {"namespace", "pod"}) for the differential test
package main

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"istio.io/istio/pkg/log"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: injectoracle settings|inject|serve|normalize|retype|genpods [flags] (see main.go)")
	os.Exit(2)
}

func quietLogs() {
	// Upstream logs to stdout by default; stdout carries our JSON lines.
	o := log.DefaultOptions()
	o.OutputPaths = []string{"stderr"}
	o.ErrorOutputPaths = []string{"stderr"}
	lvl := log.NoneLevel
	if os.Getenv("INJECTORACLE_LOG") != "" {
		lvl = log.InfoLevel
	}
	o.SetDefaultOutputLevel("all", lvl)
	for _, s := range log.Scopes() {
		s.SetOutputLevel(lvl)
	}
	_ = log.Configure(o)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	quietLogs()
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "settings":
		err = cmdSettings(args)
	case "inject":
		err = cmdInject(args)
	case "serve":
		err = cmdServe(args)
	case "normalize":
		err = cmdNormalize(args)
	case "retype":
		err = cmdRetype(args)
	case "genpods":
		err = cmdGenpods(args)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "injectoracle "+cmd+": "+err.Error())
		os.Exit(1)
	}
}

func cmdSettings(args []string) error {
	fs := flag.NewFlagSet("settings", flag.ExitOnError)
	out := fs.String("out", "", "output directory")
	istio := fs.String("istio", os.Getenv("MESHOP_ISTIO_DIR"), "istio.io/istio module directory")
	_ = fs.Parse(args)
	if *out == "" || *istio == "" {
		return fmt.Errorf("--out and --istio (or MESHOP_ISTIO_DIR) are required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	self, _ := os.Executable()
	return runSettings(*istio, abs, self)
}

type injectorFlags struct {
	settings, native, revision, compliance, path, fixtures, caseName, nodes *string
	openshift                                                               *bool
}

func addInjectorFlags(fs *flag.FlagSet) injectorFlags {
	return injectorFlags{
		settings:   fs.String("settings", "", "settings directory holding config, values, mesh"),
		native:     fs.String("native", "auto", "ENABLE_NATIVE_SIDECARS: auto (fake nodes v1.33, v1.34), true, false"),
		revision:   fs.String("revision", "default", "istiod revision"),
		compliance: fs.String("compliance", "", "COMPLIANCE_POLICY"),
		path:       fs.String("path", "/inject", "request path (/inject/cluster/c1/net/n1 sets proxy env)"),
		openshift:  fs.Bool("openshift", false, "PLATFORM=openshift"),
		nodes:      fs.String("nodes", defaultNodes, "kubelet versions of the fake cluster's nodes, comma-separated"),
		fixtures:   fs.String("fixtures", "", "with --case: the directory `settings --out` wrote"),
		caseName:   fs.String("case", "", "take settings, native, compliance and openshift from this case of --fixtures/cases.json"),
	}
}

func (f injectorFlags) build() (*upstreamInjector, error) {
	if *f.caseName != "" {
		data, err := os.ReadFile(filepath.Join(*f.fixtures, "cases.json"))
		if err != nil {
			return nil, err
		}
		var file casesFile
		if err := json.Unmarshal(data, &file); err != nil {
			return nil, err
		}
		found := false
		for _, c := range file.Cases {
			if c.Name == *f.caseName {
				*f.settings = filepath.Join(*f.fixtures, "settings", c.Settings)
				*f.native, *f.compliance, *f.openshift = c.NativeSidecars, c.CompliancePolicy, c.OpenShift
				*f.nodes = strings.Join(c.NodeKubeletVersions, ",")
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("no case %q in %s/cases.json", *f.caseName, *f.fixtures)
		}
	}
	if *f.settings == "" {
		return nil, fmt.Errorf("--settings is required")
	}
	return newUpstreamInjector(*f.settings, globals{Native: *f.native, Compliance: *f.compliance,
		OpenShift: *f.openshift, Nodes: *f.nodes}, *f.revision)
}

func lines(fn func(line []byte) any) error {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		if err := enc.Encode(fn(in.Bytes())); err != nil {
			return err
		}
	}
	return in.Err()
}

func cmdInject(args []string) error {
	fs := flag.NewFlagSet("inject", flag.ExitOnError)
	f := addInjectorFlags(fs)
	_ = fs.Parse(args)
	u, err := f.build()
	if err != nil {
		return err
	}
	return lines(func(line []byte) any {
		var req struct {
			Namespace string          `json:"namespace"`
			Pod       json.RawMessage `json:"pod"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			return injectResult{Error: "oracle: bad input line: " + err.Error()}
		}
		// The API server sends the pod as Go marshals it; so does the oracle.
		canon, err := canonicalPod(req.Pod)
		if err != nil {
			return injectResult{Error: "oracle: " + err.Error()}
		}
		return u.inject(req.Namespace, canon, *f.path)
	})
}

func cmdServe(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	f := addInjectorFlags(fs)
	cert := fs.String("cert", "", "PEM certificate")
	key := fs.String("key", "", "PEM private key")
	addr := fs.String("addr", "127.0.0.1:15017", "listen address")
	_ = fs.Parse(args)
	u, err := f.build()
	if err != nil {
		return err
	}
	if *cert == "" || *key == "" {
		return fmt.Errorf("--cert and --key are required")
	}
	// As istiod serves it (pilot/pkg/bootstrap/webhook.go): TLS >= 1.2, 30 s header timeout.
	srv := &http.Server{
		Addr:              *addr,
		Handler:           u.mux,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       90 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12},
	}
	fmt.Fprintf(os.Stderr, "injectoracle: serving upstream's injector on https://%s/inject\n", *addr)
	return srv.ListenAndServeTLS(*cert, *key)
}

func cmdNormalize(args []string) error {
	fs := flag.NewFlagSet("normalize", flag.ExitOnError)
	blank := fs.Bool("blank-fieldref", false, "blank env valueFrom.fieldRef.apiVersion in containers (the `got` side)")
	_ = fs.Parse(args)
	return lines(func(line []byte) any {
		norm, err := normalizePod(line, *blank)
		if err != nil {
			return map[string]string{"error": err.Error()}
		}
		return map[string]json.RawMessage{"pod": norm}
	})
}
