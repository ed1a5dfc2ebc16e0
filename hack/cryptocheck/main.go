// cryptocheck judges what meshop's random sprig functions render, with Go as the oracle:
// their output cannot be compared byte for byte (random IVs and salts), so Go reads it.
//
//	cryptocheck gen -out CASES.jsonl      cases for meshop (meshop_template_differential --render)
//	cryptocheck check -cases CASES.jsonl -results MESHOP.jsonl
//
// Checked: Go's (sprig's) decryptAES of meshop's encryptAES gives the plaintext back, two
// encryptions differ (random IV), meshop's decryptAES of ciphertexts Go's encryptAES made at
// gen time; x/crypto/bcrypt's CompareHashAndPassword accepts meshop's bcrypt and htpasswd
// hashes (cost 10, "$2a$") and rejects a wrong password; certs.go: meshop's genPrivateKey keys
// parse in Go with sprig's types and sizes and sign in Go's sprig, meshop's genCA /
// genSignedCert / genSelfSignedCert certificates have sprig's shape and verify in Go (and Go's
// sprig signs with meshop's CA), and the *WithKey functions certify Go's keys and sign under
// Go's CA. The list of checks is printed;
// exit status 1 when one fails.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"golang.org/x/crypto/bcrypt"
)

type testCase struct {
	Name     string         `json:"name"`
	Template string         `json:"template"`
	Data     map[string]any `json:"data"`
}

type result struct {
	Name      string `json:"name"`
	OK        bool   `json:"ok"`
	OutputB64 string `json:"output_b64"`
	Error     string `json:"error"`
}

var keys = []string{"", "k", "secretkey", "0123456789abcdef0123456789abcdef",
	"a key longer than thirty-two bytes, which sprig cuts", "schlüssel-ß"}

var plaintexts = []string{"a", "plaintext", "exactly sixteen!", "ünïcödé ✓",
	strings.Repeat("0123456789", 100), "line1\nline2\ttab", "\x00\x01binary\x7f"}

var passwords = []string{"", "abc", "s3cret!", "pässwörd ÿÿ", "ÿ", strings.Repeat("x", 72),
	"with spaces and : colons"}

func sprigRender(text string, data any) (string, error) {
	t, err := template.New("t").Funcs(sprig.TxtFuncMap()).Parse(text)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = t.Execute(&b, data)
	return b.String(), err
}

func gen(out string) error {
	var cases []testCase
	for i, k := range keys {
		for j, p := range plaintexts {
			cases = append(cases, testCase{
				Name:     fmt.Sprintf("encryptAES/%d/%d", i, j),
				Template: `{{ encryptAES .key .plain }} {{ encryptAES .key .plain }}`,
				Data:     map[string]any{"key": k, "plain": p},
			})
			crypt, err := sprigRender(`{{ encryptAES .key .plain }}`, map[string]any{"key": k, "plain": p})
			if err != nil {
				return err
			}
			cases = append(cases, testCase{
				Name:     fmt.Sprintf("decryptAES/%d/%d", i, j),
				Template: `{{ decryptAES .key .crypt }}`,
				Data:     map[string]any{"key": k, "plain": p, "crypt": crypt},
			})
		}
	}
	for i, p := range passwords {
		cases = append(cases, testCase{
			Name: fmt.Sprintf("bcrypt/%d", i), Template: `{{ bcrypt .pw }}`,
			Data: map[string]any{"pw": p},
		})
		cases = append(cases, testCase{
			Name: fmt.Sprintf("htpasswd/%d", i), Template: `{{ htpasswd .user .pw }}`,
			Data: map[string]any{"user": fmt.Sprintf("user-%d", i), "pw": p},
		})
	}
	more, err := certCases()
	if err != nil {
		return err
	}
	cases = append(cases, more...)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
			return err
		}
	}
	return nil
}

func checkBcrypt(hash, pw string) error {
	if !strings.HasPrefix(hash, "$2a$10$") || len(hash) != 60 {
		return fmt.Errorf("not a Go-shaped cost-10 bcrypt hash: %q", hash)
	}
	if cost, err := bcrypt.Cost([]byte(hash)); err != nil || cost != bcrypt.DefaultCost {
		return fmt.Errorf("cost %d, %v", cost, err)
	}
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)); err != nil {
		return fmt.Errorf("Go rejects the hash for the right password: %v", err)
	}
	wrong := "x" // bcrypt reads 72 bytes: the wrong password differs in the first one
	if pw != "" {
		wrong = string(pw[0]^1) + pw[1:]
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(wrong)) == nil {
		return fmt.Errorf("Go accepts the hash for a wrong password")
	}
	return nil
}

func judge(c testCase, out string) error {
	str := func(k string) string { s, _ := c.Data[k].(string); return s }
	kind := c.Name[:strings.IndexByte(c.Name, '/')]
	switch kind {
	case "encryptAES":
		parts := strings.Split(out, " ")
		if len(parts) != 2 {
			return fmt.Errorf("want two ciphertexts, got %q", out)
		}
		if parts[0] == parts[1] {
			return fmt.Errorf("two encryptions are identical (IV not random): %q", parts[0])
		}
		for _, crypt := range parts {
			raw, err := base64.StdEncoding.DecodeString(crypt)
			if err != nil || len(raw)%16 != 0 || len(raw) < 32 {
				return fmt.Errorf("ciphertext %q: not base64 of IV + whole blocks (%v)", crypt, err)
			}
			plain, err := sprigRender(`{{ decryptAES .key .crypt }}`, map[string]any{"key": str("key"), "crypt": crypt})
			if err != nil {
				return fmt.Errorf("Go's decryptAES: %v", err)
			}
			if plain != str("plain") {
				return fmt.Errorf("Go's decryptAES gives %q, want %q", plain, str("plain"))
			}
		}
	case "decryptAES":
		if out != str("plain") {
			return fmt.Errorf("meshop's decryptAES of Go's ciphertext gives %q, want %q", out, str("plain"))
		}
	case "bcrypt":
		return checkBcrypt(out, str("pw"))
	case "htpasswd":
		user, hash, ok := strings.Cut(out, ":")
		if !ok || user != str("user") {
			return fmt.Errorf("not %s:HASH: %q", str("user"), out)
		}
		return checkBcrypt(hash, str("pw"))
	default:
		return judgeCert(c, out)
	}
	return nil
}

func check(casesPath, resultsPath string) (int, int, error) {
	cases := map[string]testCase{}
	var order []string
	read := func(path string, each func([]byte) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			if err := each(sc.Bytes()); err != nil {
				return err
			}
		}
		return sc.Err()
	}
	if err := read(casesPath, func(b []byte) error {
		var c testCase
		if err := json.Unmarshal(b, &c); err != nil {
			return err
		}
		cases[c.Name] = c
		order = append(order, c.Name)
		return nil
	}); err != nil {
		return 0, 0, err
	}
	seen := map[string]bool{}
	passed, failed := 0, 0
	if err := read(resultsPath, func(b []byte) error {
		var r result
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		c, ok := cases[r.Name]
		if !ok {
			return fmt.Errorf("result for unknown case %s", r.Name)
		}
		seen[r.Name] = true
		var err error
		if !r.OK {
			err = fmt.Errorf("meshop failed: %s", r.Error)
		} else {
			out, derr := base64.StdEncoding.DecodeString(r.OutputB64)
			if derr != nil {
				return derr
			}
			err = judge(c, string(out))
		}
		if err != nil {
			failed++
			fmt.Printf("FAILED %s: %v\n", r.Name, err)
		} else {
			passed++
		}
		return nil
	}); err != nil {
		return 0, 0, err
	}
	for _, n := range order {
		if !seen[n] {
			failed++
			fmt.Printf("FAILED %s: no meshop result\n", n)
		}
	}
	return passed, failed, nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cryptocheck gen -out F | check -cases F -results F")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	out := fs.String("out", "", "cases to write")
	casesPath := fs.String("cases", "", "cases gen wrote")
	results := fs.String("results", "", "meshop's results")
	_ = fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "gen":
		if err := gen(*out); err != nil {
			fmt.Fprintln(os.Stderr, "cryptocheck:", err)
			os.Exit(2)
		}
	case "check":
		passed, failed, err := check(*casesPath, *results)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cryptocheck:", err)
			os.Exit(2)
		}
		fmt.Printf("cryptocheck: %d passed, %d failed\n", passed, failed)
		if failed > 0 {
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "cryptocheck: unknown command", os.Args[1])
		os.Exit(2)
	}
}
