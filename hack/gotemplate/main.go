// Command gotemplate is meshop's test oracle for its Go text/template engine: it renders
// template/data pairs with Go's own text/template, sprig v3 and Go implementations of the
// Istio injection functions, so that the C++ engine can be compared against it.
//
// Usage:
//
//	gotemplate render [-in cases.jsonl] [-out results.jsonl]
//	gotemplate gen -seed N -n COUNT [-out cases.jsonl]
//	gotemplate collect [-out cases.jsonl] FILE.cases...
//	gotemplate filecases -data data.json [-prefix P] [-out cases.jsonl] TEMPLATE_FILE...
//	gotemplate sidecar-data -values values.yaml -fixture fixture.json [-out data.json]
//	gotemplate funcnames
//
// render reads JSON lines {"name", "template", "data", "options"} (data decoded into
// map[string]any, numbers float64, as sigs.k8s.io/yaml and encoding/json give) and writes
// JSON lines {"name", "output"} or {"name", "error", "phase": "parse"|"exec"}. Outputs that
// are not valid UTF-8 are written base64-encoded in "output_b64" so no byte is lost. Each
// case that renders is rendered twice; when the outputs differ (random functions), the
// result says "nondeterministic": true.
//
// funcnames prints the names of the FuncMap render uses (sprig's TxtFuncMap, the extras, the
// Istio functions), sorted, one per line: meshop must define every one.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"text/template"
	"unicode/utf8"

	"github.com/Masterminds/sprig/v3"
)

// Case is one template/data pair to render.
type Case struct {
	Name     string   `json:"name"`
	Template string   `json:"template"`
	Data     any      `json:"data"`
	Options  []string `json:"options,omitempty"`
	// TemplateName is the name given to template.New; "t" when empty. It appears in errors.
	TemplateName string `json:"tname,omitempty"`
	// Tags are free-form labels for the test report (e.g. "feature:range").
	Tags []string `json:"tags,omitempty"`

	hasData bool // set by the case-file reader
}

// Result is the oracle's answer for one case.
type Result struct {
	Name      string `json:"name"`
	Output    string `json:"output,omitempty"`
	OutputB64 string `json:"output_b64,omitempty"`
	Error     string `json:"error,omitempty"`
	Phase     string `json:"phase,omitempty"`
	OK        bool   `json:"ok"`
	// Nondeterministic: two renders of the case gave different outputs (random functions,
	// fresh keys): there is nothing to compare meshop's output against.
	Nondeterministic bool `json:"nondeterministic,omitempty"`
}

// FuncMap is what meshop's engine is checked against: sprig first, then meshop's extras
// (Helm-style functions the issue asks for that sprig lacks), then the Istio functions,
// which override sprig's indent, contains, env and omit as in Istio's injector; with
// MESHOP_TEMPLATE_TEST_NOW set, the functions that read the clock read that instant.
func FuncMap() template.FuncMap {
	fm := template.FuncMap{}
	for k, v := range sprig.TxtFuncMap() {
		fm[k] = v
	}
	for k, v := range extraFuncs() {
		fm[k] = v
	}
	for k, v := range istioFuncs() {
		fm[k] = v
	}
	for k, v := range clockFuncs() {
		fm[k] = v
	}
	return fm
}

// Render renders one case.
func Render(c Case) Result {
	name := c.TemplateName
	if name == "" {
		name = "t"
	}
	res := Result{Name: c.Name}
	t := template.New(name).Funcs(FuncMap())
	if len(c.Options) > 0 {
		for _, o := range c.Options {
			if err := setOption(t, o); err != nil {
				res.Error, res.Phase = err.Error(), "option"
				return res
			}
		}
	}
	t, err := t.Parse(c.Template)
	if err != nil {
		res.Error, res.Phase = err.Error(), "parse"
		return res
	}
	var buf bytes.Buffer
	if err := safeExecute(t, &buf, c.Data); err != nil {
		res.Error, res.Phase = err.Error(), "exec"
		return res
	}
	out := buf.String()
	if utf8.ValidString(out) {
		res.Output = out
	} else {
		res.OutputB64 = base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	res.OK = true
	return res
}

// setOption applies one template option; Option panics on unknown ones, so catch that.
func setOption(t *template.Template, o string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	t.Option(o)
	return nil
}

// safeExecute turns a panic inside a function (sprig has a few) into an error, as
// text/template itself does for panics in called functions.
func safeExecute(t *template.Template, w io.Writer, data any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return t.Execute(w, data)
}

func runRender(args []string) error {
	fs := flag.NewFlagSet("render", flag.ExitOnError)
	in := fs.String("in", "-", "cases, JSON lines")
	out := fs.String("out", "-", "results, JSON lines")
	_ = fs.Parse(args)
	r, err := openIn(*in)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := openOut(*out)
	if err != nil {
		return err
	}
	defer w.Close()
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		var c Case
		if err := json.Unmarshal(b, &c); err != nil {
			return fmt.Errorf("%s:%d: %v", *in, line, err)
		}
		res := Render(c)
		if res.OK {
			if again := Render(c); again.Output != res.Output || again.OutputB64 != res.OutputB64 {
				res.Nondeterministic = true
			}
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return sc.Err()
}

func openIn(p string) (io.ReadCloser, error) {
	if p == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(p)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func openOut(p string) (io.WriteCloser, error) {
	if p == "-" {
		return nopWriteCloser{os.Stdout}, nil
	}
	return os.Create(p)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gotemplate render|gen|collect|filecases|sidecar-data|funcnames [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "render":
		err = runRender(os.Args[2:])
	case "gen":
		err = runGen(os.Args[2:])
	case "filecases":
		err = runFileCases(os.Args[2:])
	case "collect":
		err = runCollect(os.Args[2:])
	case "sidecar-data":
		err = runSidecarData(os.Args[2:])
	case "funcnames":
		names := make([]string, 0, len(FuncMap()))
		for n := range FuncMap() {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Println(n)
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotemplate:", err)
		os.Exit(1)
	}
}
