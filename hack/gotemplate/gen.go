package main

// gen writes random template/data cases for the differential suite. It is seeded, so a
// seed and a count always give the same cases. Expressions are built by the kind of value
// they yield (string, int, float, bool, list, map, any) so that most templates execute;
// some deliberately mix kinds (comparing a float with an int constant, indexing a list with
// a string, ...) so that error paths are compared too.

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"strings"
)

type kind int

const (
	kStr kind = iota
	kInt
	kFloat
	kBool
	kList
	kMap
	kAny
	numKinds
)

type gen struct {
	r     *rand.Rand
	depth int
	vars  []varInfo // variables in scope (declared in the enclosing template text)
}

type varInfo struct {
	name string
	k    kind
}

var words = []string{"", "a", "b", "foo", "bar", "Foo Bar", " pad ", "x-y_z.", "héllo", "1.5", "42",
	"true", "on", "null", "a,b,,c", "--x--", "istio-proxy", "sidecar.istio.io/inject", "<tag>&", "tab\there", "line\nbreak"}

func (g *gen) word() string { return words[g.r.Intn(len(words))] }

func (g *gen) lit(s string) string {
	if g.r.Intn(4) == 0 && !strings.ContainsAny(s, "`") {
		return "`" + s + "`"
	}
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), `\u003c`, "<")
}

// data builds a random data map with a fixed set of keys so expressions can address them.
func (g *gen) data() map[string]any {
	d := map[string]any{}
	for i := 0; i < 3; i++ {
		d[fmt.Sprintf("s%d", i)] = g.word()
	}
	nums := []float64{0, 1, 2, 3, -1, 1.5, 15020, 1e6, 1e21, 0.000001, 63, 100, -2.5}
	for i := 0; i < 3; i++ {
		d[fmt.Sprintf("n%d", i)] = nums[g.r.Intn(len(nums))]
	}
	d["b0"] = g.r.Intn(2) == 0
	d["b1"] = g.r.Intn(2) == 0
	l := []any{}
	for i := g.r.Intn(5); i > 0; i-- {
		l = append(l, g.word())
	}
	d["l"] = l
	ln := []any{}
	for i := g.r.Intn(4); i > 0; i-- {
		ln = append(ln, nums[g.r.Intn(len(nums))])
	}
	d["ln"] = ln
	m := map[string]any{}
	for i := g.r.Intn(5); i > 0; i-- {
		m[[]string{"k1", "k2", "app", "version", "Zed", "a.b"}[g.r.Intn(6)]] = g.word()
	}
	d["m"] = m
	d["nested"] = map[string]any{"inner": map[string]any{"s": g.word(), "n": nums[g.r.Intn(len(nums))]}, "list": ln}
	if g.r.Intn(3) == 0 {
		d["nil"] = nil
	}
	return d
}

func (g *gen) pick(opts ...func() string) string { return opts[g.r.Intn(len(opts))]() }

func (g *gen) varOf(k kind) string {
	var c []string
	for _, v := range g.vars {
		if v.k == k || k == kAny {
			c = append(c, v.name)
		}
	}
	if len(c) == 0 {
		return ""
	}
	return c[g.r.Intn(len(c))]
}

// expr yields an expression (an operand or a parenthesised call) of kind k.
func (g *gen) expr(k kind) string {
	g.depth++
	defer func() { g.depth-- }()
	leaf := g.depth > 3 || g.r.Intn(3) == 0
	if v := g.varOf(k); v != "" && g.r.Intn(5) == 0 {
		return v
	}
	switch k {
	case kStr:
		if leaf {
			return g.pick(
				func() string { return fmt.Sprintf(".s%d", g.r.Intn(3)) },
				func() string { return g.lit(g.word()) },
				func() string { return ".nested.inner.s" },
			)
		}
		return "(" + g.pick(
			func() string { return "upper " + g.expr(kStr) },
			func() string { return "lower " + g.expr(kStr) },
			func() string { return "title " + g.expr(kStr) },
			func() string { return "trim " + g.expr(kStr) },
			func() string { return "trimAll " + g.lit("-_. ") + " " + g.expr(kStr) },
			func() string { return "trimPrefix " + g.expr(kStr) + " " + g.expr(kStr) },
			func() string { return "trimSuffix " + g.lit(g.word()) + " " + g.expr(kStr) },
			func() string { return "quote " + g.expr(kAny) },
			func() string { return "squote " + g.expr(kAny) },
			func() string { return fmt.Sprintf("trunc %d %s", g.r.Intn(12)-3, g.expr(kStr)) },
			func() string { return "replace " + g.lit(g.word()) + " " + g.lit(g.word()) + " " + g.expr(kStr) },
			func() string { return "printf " + g.lit(g.format()) + " " + g.expr(kAny) + " " + g.expr(kAny) },
			func() string { return "print " + g.expr(kAny) + " " + g.expr(kAny) },
			func() string { return "println " + g.expr(kAny) },
			func() string {
				return "join " + g.lit(g.pick(func() string { return "," }, func() string { return ", " })) + " " + g.expr(kList)
			},
			func() string { return "toString " + g.expr(kAny) },
			func() string { return "default " + g.lit(g.word()) + " " + g.expr(kAny) },
			func() string { return "toJson " + g.expr(kAny) },
			func() string { return "toRawJson " + g.expr(kAny) },
			func() string { return "toPrettyJson " + g.expr(kMap) },
			func() string { return "toYaml " + g.expr(kAny) },
			func() string { return "b64enc " + g.expr(kStr) },
			func() string { return "b64dec " + g.expr(kStr) },
			func() string { return "sha256sum " + g.expr(kStr) },
			func() string { return "index .m " + g.lit([]string{"k1", "k2", "app", "missing"}[g.r.Intn(4)]) },
			func() string { return "toLower " + g.expr(kStr) },
			func() string { return "indent " + fmt.Sprint(g.r.Intn(4)) + " " + g.expr(kStr) },
			func() string { return "nindent " + fmt.Sprint(g.r.Intn(4)) + " " + g.expr(kStr) },
			func() string { return "valueOrDefault " + g.expr(kAny) + " " + g.lit("dflt") },
			func() string { return "excludeInboundPort " + g.expr(kAny) + " " + g.lit("15020, 8080,,") },
			func() string { return "directory " + g.lit("/etc/certs/root-cert.pem") },
			func() string { return "annotation (dict \"Annotations\" .m) " + g.lit("k1") + " " + g.expr(kAny) },
			func() string {
				return "regexReplaceAll " + g.lit("[aeiou]+") + " " + g.expr(kStr) + " " + g.lit("<$0>")
			},
			func() string { return "regexFind " + g.lit("[a-z]+") + " " + g.expr(kStr) },
			func() string { return "html " + g.expr(kAny) },
			func() string { return "js " + g.expr(kAny) },
			func() string { return "urlquery " + g.expr(kAny) },
			func() string { return "typeOf " + g.expr(kAny) },
			func() string { return "ternary " + g.expr(kStr) + " " + g.expr(kStr) + " " + g.expr(kBool) },
			func() string { return "coalesce " + g.expr(kAny) + " " + g.expr(kStr) },
			func() string { return "first " + g.expr(kList) },
			func() string { return "last " + g.expr(kList) },
			func() string { return "cat " + g.expr(kAny) + " " + g.expr(kAny) },
			func() string { return "toJSON .m" },
			func() string { return "structToJSON " + g.expr(kAny) },
		) + ")"
	case kInt:
		if leaf {
			return fmt.Sprint(g.r.Intn(7) - 2)
		}
		return "(" + g.pick(
			func() string { return "len " + g.expr(g.pickKind(kStr, kList, kMap)) },
			func() string { return "add " + g.expr(kInt) + " " + g.expr(kAny) },
			func() string { return "add1 " + g.expr(kFloat) },
			func() string { return "sub " + g.expr(kInt) + " " + g.expr(kInt) },
			func() string { return "mul " + g.expr(kInt) + " " + g.expr(kFloat) },
			func() string { return "div " + g.expr(kInt) + " " + g.expr(kInt) },
			func() string { return "mod " + g.expr(kInt) + " " + g.expr(kInt) },
			func() string { return "max " + g.expr(kInt) + " " + g.expr(kFloat) },
			func() string { return "min " + g.expr(kInt) + " " + g.expr(kInt) },
			func() string { return "int " + g.expr(kAny) },
			func() string { return "int64 " + g.expr(kFloat) },
			func() string { return "atoi " + g.expr(kStr) },
		) + ")"
	case kFloat:
		if leaf || g.r.Intn(2) == 0 {
			return g.pick(
				func() string { return fmt.Sprintf(".n%d", g.r.Intn(3)) },
				func() string { return ".nested.inner.n" },
				func() string { return "1.5" },
			)
		}
		return "(" + g.pick(
			func() string { return "float64 " + g.expr(kAny) },
			func() string { return "index .ln " + fmt.Sprint(g.r.Intn(3)) },
		) + ")"
	case kBool:
		if leaf {
			return g.pick(
				func() string { return ".b0" },
				func() string { return ".b1" },
				func() string { return "true" },
				func() string { return "false" },
			)
		}
		return "(" + g.pick(
			func() string { return "not " + g.expr(kAny) },
			func() string { return "and " + g.expr(kAny) + " " + g.expr(kBool) },
			func() string { return "or " + g.expr(kAny) + " " + g.expr(kBool) },
			func() string { return "eq " + g.expr(kStr) + " " + g.expr(kStr) },
			func() string { return "eq " + g.expr(kStr) + " " + g.expr(kStr) + " " + g.expr(kStr) },
			func() string { return "ne " + g.expr(kInt) + " " + g.expr(kInt) },
			func() string { return "eq " + g.expr(kFloat) + " " + g.expr(kFloat) },
			func() string { return "eq " + g.expr(kFloat) + " " + g.expr(kInt) },
			func() string {
				return g.pick(func() string { return "lt" }, func() string { return "le" }, func() string { return "gt" }, func() string { return "ge" }) + " " + g.expr(kInt) + " " + g.expr(kInt)
			},
			func() string { return "lt " + g.expr(kStr) + " " + g.expr(kStr) },
			func() string { return "empty " + g.expr(kAny) },
			func() string { return "hasPrefix " + g.expr(kStr) + " " + g.expr(kStr) },
			func() string { return "hasSuffix " + g.expr(kStr) + " " + g.expr(kStr) },
			func() string { return "contains " + g.expr(kStr) + " " + g.expr(kStr) },
			func() string { return "has " + g.expr(kStr) + " " + g.expr(kList) },
			func() string { return "hasKey " + g.expr(kMap) + " " + g.expr(kStr) },
			func() string { return "isset .m " + g.expr(kStr) },
			func() string { return "regexMatch " + g.lit("^[a-z]+$") + " " + g.expr(kStr) },
			func() string {
				return "kindIs " + g.lit([]string{"string", "map", "slice", "float64", "int", "bool", "invalid"}[g.r.Intn(7)]) + " " + g.expr(kAny)
			},
			func() string {
				return "semverCompare " + g.lit(">=1.2.0") + " " + g.lit([]string{"1.2.3", "1.1.0", "v2.0.0-alpha", "bad"}[g.r.Intn(4)])
			},
		) + ")"
	case kList:
		if leaf {
			return g.pick(func() string { return ".l" }, func() string { return ".ln" }, func() string { return "(list)" })
		}
		return "(" + g.pick(
			func() string { return "list " + g.expr(kAny) + " " + g.expr(kStr) },
			func() string { return "append " + g.expr(kList) + " " + g.expr(kAny) },
			func() string { return "prepend " + g.expr(kList) + " " + g.expr(kAny) },
			func() string { return "splitList " + g.lit(",") + " " + g.expr(kStr) },
			func() string { return "uniq " + g.expr(kList) },
			func() string { return "rest " + g.expr(kList) },
			func() string { return "initial " + g.expr(kList) },
			func() string { return "without " + g.expr(kList) + " " + g.expr(kStr) },
			func() string { return "keys " + g.expr(kMap) + " | sortAlpha" },
			func() string { return "toStrings " + g.expr(kList) },
			func() string { return "slice " + g.expr(kList) + " " + fmt.Sprint(g.r.Intn(2)) },
			func() string { return "values " + g.expr(kMap) + " | sortAlpha" },
			func() string { return "omitNil " + g.expr(kList) },
		) + ")"
	case kMap:
		if leaf {
			return g.pick(func() string { return ".m" }, func() string { return ".nested" }, func() string { return "(dict)" })
		}
		return "(" + g.pick(
			func() string {
				return "dict " + g.lit("a") + " " + g.expr(kAny) + " " + g.lit("b") + " " + g.expr(kAny)
			},
			func() string { return "pick " + g.expr(kMap) + " " + g.lit("k1") + " " + g.lit("inner") },
			func() string { return "omit " + g.expr(kMap) + " " + g.lit("k1") },
			func() string { return "merge (dict " + g.lit("k1") + " " + g.expr(kAny) + ") " + g.expr(kMap) },
			func() string { return "mergeOverwrite (dict " + g.lit("k1") + " " + g.expr(kAny) + ") " + g.expr(kMap) },
			func() string { return "deepCopy " + g.expr(kMap) },
			func() string { return "strdict " + g.lit("x") + " " + g.expr(kStr) },
			func() string { return "fromJson " + g.lit(`{"a":1,"b":[true,null]}`) },
			func() string { return "fromYaml " + g.lit("a: 1\nb: [on, x]\n") },
			func() string { return "set (dict) " + g.lit("k") + " " + g.expr(kAny) },
			func() string { return "unset (deepCopy " + g.expr(kMap) + ") " + g.lit("k1") },
			func() string { return "omitNil " + g.expr(kMap) },
		) + ")"
	default:
		if g.r.Intn(6) == 0 {
			return g.pick(func() string { return ".nil" }, func() string { return ".missing" }, func() string { return ".m.missing" }, func() string { return "nil" })
		}
		if g.r.Intn(5) == 0 {
			return "(get " + g.expr(kMap) + " " + g.lit("k1") + ")"
		}
		return g.expr(kind(g.r.Intn(int(kAny))))
	}
}

func (g *gen) pickKind(ks ...kind) kind { return ks[g.r.Intn(len(ks))] }

func (g *gen) format() string {
	verbs := []string{"%s", "%v", "%d", "%q", "%t", "%5s", "%-4v|", "%x", "%.2f", "%g", "%%", "%03d", "%+v", "%X", "%8.3f", "%T", "%e"}
	var b strings.Builder
	b.WriteString(g.word()[:0])
	for i := 1 + g.r.Intn(3); i > 0; i-- {
		b.WriteString(verbs[g.r.Intn(len(verbs))])
		b.WriteString([]string{"", " ", "-", ":"}[g.r.Intn(4)])
	}
	return b.String()
}

func (g *gen) open() string {
	if g.r.Intn(4) == 0 {
		return "{{- "
	}
	return "{{ "
}

func (g *gen) close() string {
	if g.r.Intn(4) == 0 {
		return " -}}"
	}
	return " }}"
}

func (g *gen) text() string {
	return []string{"", "x", " ", "\n", "  text  ", "\n  - item\n", ":", "\t"}[g.r.Intn(8)]
}

// pipeline is an expression, maybe piped into one-argument functions.
func (g *gen) pipeline() string {
	p := g.expr(kAny)
	for i := g.r.Intn(3); i > 0; i-- {
		p += " | " + []string{"quote", "upper", "toString", "len", "default \"d\"", "trim", "toJson", "printf \"%v\"", "b64enc", "indent 2", "nindent 2", "squote", "toYaml", "print", "lower"}[g.r.Intn(15)]
	}
	return p
}

// block writes a sequence of template items.
func (g *gen) block(n int, b *strings.Builder, inRange bool) {
	for i := 0; i < n; i++ {
		b.WriteString(g.text())
		switch g.r.Intn(14) {
		case 0, 1, 2, 3:
			b.WriteString(g.open() + g.pipeline() + g.close())
		case 4:
			vars := g.vars
			b.WriteString(g.open() + "if " + g.expr(kAny) + g.close())
			g.block(1+g.r.Intn(2), b, inRange)
			if g.r.Intn(2) == 0 {
				b.WriteString(g.open() + "else if " + g.expr(kBool) + g.close())
				g.block(1, b, inRange)
			}
			if g.r.Intn(2) == 0 {
				b.WriteString(g.open() + "else" + g.close())
				g.block(1, b, inRange)
			}
			b.WriteString(g.open() + "end" + g.close())
			g.vars = vars
		case 5:
			lk := g.pickKind(kList, kMap, kInt)
			vars := g.vars
			switch g.r.Intn(3) {
			case 0:
				b.WriteString(g.open() + "range " + g.expr(lk) + g.close())
			case 1:
				g.vars = append(g.vars, varInfo{"$v", kAny})
				b.WriteString(g.open() + "range $v := " + g.expr(lk) + g.close())
			default:
				g.vars = append(g.vars, varInfo{"$v", kAny}, varInfo{"$i", kAny})
				b.WriteString(g.open() + "range $i, $v := " + g.expr(lk) + g.close())
			}
			g.block(1+g.r.Intn(2), b, true)
			b.WriteString("{{ . }}")
			if g.r.Intn(3) == 0 {
				b.WriteString(g.open() + "else" + g.close() + "empty")
			}
			b.WriteString(g.open() + "end" + g.close())
			g.vars = vars
		case 6:
			vars := g.vars
			b.WriteString(g.open() + "with " + g.expr(kAny) + g.close() + "{{ . }}")
			g.block(1, b, inRange)
			if g.r.Intn(3) == 0 {
				b.WriteString(g.open() + "else" + g.close() + "none")
			}
			b.WriteString(g.open() + "end" + g.close())
			g.vars = vars
		case 7:
			k := kind(g.r.Intn(int(numKinds)))
			name := fmt.Sprintf("$x%d", len(g.vars))
			b.WriteString(g.open() + name + " := " + g.expr(k) + g.close())
			g.vars = append(g.vars, varInfo{name, k})
			b.WriteString("{{ " + name + " }}")
		case 8:
			if v := g.varOf(kAny); v != "" && v != "$v" && v != "$i" {
				b.WriteString(g.open() + v + " = " + g.expr(kAny) + g.close())
			}
		case 9:
			b.WriteString("{{/* comment */}}")
		case 10:
			if inRange && g.r.Intn(2) == 0 {
				b.WriteString(g.open() + "if " + g.expr(kBool) + " }}{{ " + []string{"break", "continue"}[g.r.Intn(2)] + " }}{{ end" + g.close())
			} else {
				b.WriteString("{{ template \"sub\" " + g.expr(kAny) + " }}")
			}
		case 11:
			b.WriteString(g.open() + "(" + g.expr(kMap) + ")." + []string{"k1", "inner", "missing"}[g.r.Intn(3)] + g.close())
		default:
			b.WriteString(g.open() + g.expr(kind(g.r.Intn(int(numKinds)))) + g.close())
		}
	}
}

func (g *gen) template() string {
	var b strings.Builder
	g.vars = nil
	g.block(1+g.r.Intn(4), &b, false)
	b.WriteString(`{{ define "sub" }}[{{ . }}]{{ end }}`)
	return b.String()
}

func runGen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	seed := fs.Int64("seed", 1, "random seed")
	n := fs.Int("n", 500, "number of cases")
	out := fs.String("out", "-", "output JSON lines")
	_ = fs.Parse(args)
	w, err := openOut(*out)
	if err != nil {
		return err
	}
	defer w.Close()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	g := &gen{r: rand.New(rand.NewSource(*seed))}
	for i := 0; i < *n; i++ {
		c := Case{Name: fmt.Sprintf("gen/%d/%d", *seed, i), Template: g.template(), Data: g.data()}
		if err := enc.Encode(c); err != nil {
			return err
		}
	}
	return nil
}
