package main

// Reads upstream's TestInjection case table from pkg/kube/inject/inject_test.go in the module
// cache (go/ast, not a copy), so a bump of ISTIO_MODULE_VERSION that adds, removes or changes a
// case shows up here instead of silently testing against stale settings. Fields that are
// literals (in, want, setFlags, inFilePath, skip*, expected*) are read directly; the `mesh` and
// `setup` callbacks are Go code, so they are recognised by their source text and reproduced by
// the functions in tweaks.go. An unknown callback is an error: it needs a new tweak.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

type upstreamCase struct {
	Index         int
	In            string
	Want          string
	SetFlags      []string
	InFilePath    string
	MeshSource    string // normalised source of the `mesh` callback body ("" = none)
	SetupSource   string // normalised source of the `setup` callback body ("" = none)
	SkipWebhook   bool
	SkipInjection bool
	ExpectedError string
	ExpectedLog   string
	AutoAdded     bool     // not in the explicit table: discovered from testdata like upstream does
	Test          string   // TestInjection or TestInjectionOlderVersion
	TestIndex     int      // the [NN] of the upstream sub-test name
	Nodes         []string // kubelet versions of the test's fake cluster nodes
}

// squash removes all white space, so matching does not depend on gofmt details.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// readUpstreamCases returns TestInjection's cases (explicit and auto-discovered), then
// TestInjectionOlderVersion's (same shape; its fake cluster has a v1.28 node, so native
// sidecars auto-detect as off).
func readUpstreamCases(istioDir string) ([]upstreamCase, error) {
	main, err := readTestTable(istioDir, "TestInjection")
	if err != nil {
		return nil, err
	}
	older, err := readTestTable(istioDir, "TestInjectionOlderVersion")
	if err != nil {
		return nil, err
	}
	for i := range older {
		older[i].Index = len(main) + i
	}
	return append(main, older...), nil
}

func readTestTable(istioDir, testName string) ([]upstreamCase, error) {
	path := filepath.Join(istioDir, "pkg/kube/inject/inject_test.go")
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var table *ast.CompositeLit
	var nodes []string
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Name.Name != testName {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			// The fake nodes: NodeSystemInfo{KubeletVersion: "v1.33.0"}.
			if kv, ok := n.(*ast.KeyValueExpr); ok {
				if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "KubeletVersion" {
					if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if v, err := strconv.Unquote(lit.Value); err == nil {
							nodes = append(nodes, v)
						}
					}
				}
			}
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
				return true
			}
			if id, ok := as.Lhs[0].(*ast.Ident); ok && id.Name == "cases" {
				if cl, ok := as.Rhs[0].(*ast.CompositeLit); ok && table == nil {
					table = cl
				}
			}
			return true
		})
	}
	if table == nil {
		return nil, fmt.Errorf("%s: no `cases := []testCase{...}` in %s", path, testName)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: no fake node KubeletVersion in %s", path, testName)
	}
	text := func(n ast.Node) string {
		return string(src[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset])
	}
	str := func(e ast.Expr) (string, error) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", fmt.Errorf("%s: expected a string literal, got %s", fset.Position(e.Pos()), text(e))
		}
		return strconv.Unquote(lit.Value)
	}
	var cases []upstreamCase
	for i, elt := range table.Elts {
		cl, ok := elt.(*ast.CompositeLit)
		if !ok {
			return nil, fmt.Errorf("%s: case %d is not a composite literal", fset.Position(elt.Pos()), i)
		}
		c := upstreamCase{Index: i, TestIndex: i, Test: testName, Nodes: nodes}
		for _, f := range cl.Elts {
			kv, ok := f.(*ast.KeyValueExpr)
			if !ok {
				return nil, fmt.Errorf("%s: case %d: positional field", fset.Position(f.Pos()), i)
			}
			key := kv.Key.(*ast.Ident).Name
			var err error
			switch key {
			case "in":
				c.In, err = str(kv.Value)
			case "want":
				c.Want, err = str(kv.Value)
			case "inFilePath":
				c.InFilePath, err = str(kv.Value)
			case "expectedError":
				c.ExpectedError, err = str(kv.Value)
			case "expectedLog":
				c.ExpectedLog, err = str(kv.Value)
			case "skipWebhook", "skipInjection":
				id, ok := kv.Value.(*ast.Ident)
				if !ok || (id.Name != "true" && id.Name != "false") {
					return nil, fmt.Errorf("case %d: %s is not a bool literal", i, key)
				}
				if key == "skipWebhook" {
					c.SkipWebhook = id.Name == "true"
				} else {
					c.SkipInjection = id.Name == "true"
				}
			case "setFlags":
				lst, ok := kv.Value.(*ast.CompositeLit)
				if !ok {
					return nil, fmt.Errorf("case %d: setFlags is not a literal", i)
				}
				for _, e := range lst.Elts {
					s, err := str(e)
					if err != nil {
						return nil, err
					}
					c.SetFlags = append(c.SetFlags, s)
				}
			case "mesh", "setup":
				fl, ok := kv.Value.(*ast.FuncLit)
				if !ok {
					return nil, fmt.Errorf("case %d: %s is not a func literal", i, key)
				}
				body := squash(text(fl.Body))
				if key == "mesh" {
					c.MeshSource = body
				} else {
					c.SetupSource = body
				}
			default:
				return nil, fmt.Errorf("case %d: unknown field %q (upstream's testCase changed)", i, key)
			}
			if err != nil {
				return nil, fmt.Errorf("case %d: %s: %v", i, key, err)
			}
		}
		cases = append(cases, c)
	}

	if testName != "TestInjection" {
		return cases, nil
	}
	// Auto-discovery, as the test does after its table: every *.yaml (not *.iop.yaml) whose
	// <name>.injected no case claims, in directory order (os.ReadDir sorts by name).
	claimed := map[string]bool{}
	for _, c := range cases {
		if c.Want != "" {
			claimed[c.Want] = true
		} else {
			claimed[c.In+".injected"] = true
		}
	}
	entries, err := os.ReadDir(filepath.Join(istioDir, "pkg/kube/inject/testdata/inject"))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.HasSuffix(n, ".iop.yaml") || !strings.HasSuffix(n, ".yaml") || claimed[n+".injected"] {
			continue
		}
		cases = append(cases, upstreamCase{Index: len(cases), TestIndex: len(cases), In: n, Want: n + ".injected",
			AutoAdded: true, Test: testName, Nodes: nodes})
	}
	return cases, nil
}
