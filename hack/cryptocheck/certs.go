package main

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"strings"
	"time"
)

// The certificate cases: meshop generates, Go parses and verifies; and Go's keys and CA in
// meshop's functions, and meshop's CA in Go's genSignedCert.
func certCases() ([]testCase, error) {
	var cases []testCase
	for _, typ := range []string{"rsa", "ecdsa", "ed25519", "dsa"} {
		cases = append(cases, testCase{Name: "genPrivateKey/" + typ, Template: `{{ genPrivateKey .type }}`,
			Data: map[string]any{"type": typ}})
	}
	cases = append(cases, testCase{Name: "chain/meshop",
		Template: `{{ $ca := genCA "meshop-ca" 365 }}{{ $c := genSignedCert "svc.ns" (list "10.0.0.1" "::1" "::ffff:192.168.1.2") (list "svc.ns.svc" "svc") 30 $ca }}{{ $ca.Cert }}{{ $ca.Key }}{{ $c.Cert }}{{ $c.Key }}`,
		Data:     map[string]any{}})
	cases = append(cases, testCase{Name: "selfsigned/meshop",
		Template: `{{ $c := genSelfSignedCert "host.example" (list "127.0.0.1") (list "host.example" "*.host.example") 10 }}{{ $c.Cert }}{{ $c.Key }}`,
		Data:     map[string]any{}})
	for _, typ := range []string{"rsa", "ecdsa", "ed25519"} {
		key, err := sprigRender(`{{ genPrivateKey .type }}`, map[string]any{"type": typ})
		if err != nil {
			return nil, err
		}
		cases = append(cases, testCase{Name: "withkey/" + typ,
			Template: `{{ $ca := genCAWithKey "ca-with-key" 5 .key }}{{ $s := genSelfSignedCertWithKey "self-with-key" nil (list "self.example") 5 .key }}{{ $l := genSignedCertWithKey "leaf-with-key" nil (list "leaf.example") 5 $ca .key }}{{ $ca.Cert }}{{ $ca.Key }}{{ $s.Cert }}{{ $l.Cert }}`,
			Data:     map[string]any{"type": typ, "key": key}})
	}
	goca, err := sprigRender(`{{ $ca := genCA "go-ca" 30 }}{{ $ca.Cert }}{{ $ca.Key }}`, nil)
	if err != nil {
		return nil, err
	}
	cases = append(cases, testCase{Name: "goca/signed-by-go-ca",
		Template: `{{ $ca := buildCustomCert (b64enc .cacert) (b64enc .cakey) }}{{ $c := genSignedCert "leaf" nil (list "leaf.example") 5 $ca }}{{ $c.Cert }}{{ $c.Key }}`,
		Data:     map[string]any{"ca": goca, "cacert": pemOf(goca, "CERTIFICATE"), "cakey": pemOf(goca, "RSA PRIVATE KEY")}})
	return cases, nil
}

func pemOf(text, typ string) string {
	rest := []byte(text)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return ""
		}
		if b.Type == typ {
			return string(pem.EncodeToMemory(b))
		}
	}
}

func blocks(text string) []*pem.Block {
	var out []*pem.Block
	rest := []byte(text)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return out
		}
		out = append(out, b)
	}
}

type dsaKey struct {
	Version       int
	P, Q, G, Y, X *big.Int
}

// checkKey parses meshop's key as sprig does and checks its type and size.
func checkKey(typ string, b *pem.Block) (crypto.PublicKey, error) {
	switch typ {
	case "", "rsa":
		if b.Type != "RSA PRIVATE KEY" {
			return nil, fmt.Errorf("PEM type %s", b.Type)
		}
		k, err := x509.ParsePKCS1PrivateKey(b.Bytes)
		if err != nil {
			return nil, err
		}
		if k.N.BitLen() != 4096 {
			return nil, fmt.Errorf("RSA key of %d bits, sprig's are 4096", k.N.BitLen())
		}
		return k.Public(), k.Validate()
	case "ecdsa":
		if b.Type != "EC PRIVATE KEY" {
			return nil, fmt.Errorf("PEM type %s", b.Type)
		}
		k, err := x509.ParseECPrivateKey(b.Bytes)
		if err != nil {
			return nil, err
		}
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("curve %s, sprig's is P-256", k.Curve.Params().Name)
		}
		return k.Public(), nil
	case "ed25519":
		if b.Type != "PRIVATE KEY" {
			return nil, fmt.Errorf("PEM type %s", b.Type)
		}
		k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
		if err != nil {
			return nil, err
		}
		ek, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("PKCS#8 key of type %T", k)
		}
		return ek.Public(), nil
	case "dsa":
		if b.Type != "DSA PRIVATE KEY" {
			return nil, fmt.Errorf("PEM type %s", b.Type)
		}
		var k dsaKey
		if _, err := asn1.Unmarshal(b.Bytes, &k); err != nil {
			return nil, err
		}
		if k.P.BitLen() != 2048 || k.Q.BitLen() != 256 {
			return nil, fmt.Errorf("DSA L=%d N=%d, sprig's are L2048N256", k.P.BitLen(), k.Q.BitLen())
		}
		if new(big.Int).Exp(k.G, k.X, k.P).Cmp(k.Y) != 0 {
			return nil, fmt.Errorf("DSA Y != G^X mod P")
		}
		return nil, nil
	}
	return nil, fmt.Errorf("unknown key type %q", typ)
}

func parseCert(b *pem.Block) (*x509.Certificate, error) {
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("not a CERTIFICATE block")
	}
	return x509.ParseCertificate(b.Bytes)
}

// checkShape: what sprig's getBaseCertTemplate sets.
func checkShape(c *x509.Certificate, cn string, days int, isCA bool) error {
	if c.Subject.CommonName != cn {
		return fmt.Errorf("CN %q, want %q", c.Subject.CommonName, cn)
	}
	if c.SerialNumber.Sign() < 0 || c.SerialNumber.BitLen() > 128 {
		return fmt.Errorf("serial %v outside [0, 2^128)", c.SerialNumber)
	}
	if d := c.NotAfter.Sub(c.NotBefore); d != time.Duration(days)*24*time.Hour {
		return fmt.Errorf("validity %v, want %d days", d, days)
	}
	if time.Since(c.NotBefore) < 0 || time.Since(c.NotBefore) > 10*time.Minute {
		return fmt.Errorf("NotBefore %v is not now", c.NotBefore)
	}
	want := x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature
	if isCA {
		want |= x509.KeyUsageCertSign
	}
	if c.KeyUsage != want {
		return fmt.Errorf("key usage %b, want %b", c.KeyUsage, want)
	}
	if len(c.ExtKeyUsage) != 2 || c.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth || c.ExtKeyUsage[1] != x509.ExtKeyUsageClientAuth {
		return fmt.Errorf("ext key usage %v", c.ExtKeyUsage)
	}
	if !c.BasicConstraintsValid || c.IsCA != isCA {
		return fmt.Errorf("basic constraints valid=%v CA=%v, want CA=%v", c.BasicConstraintsValid, c.IsCA, isCA)
	}
	if isCA && len(c.SubjectKeyId) != 20 {
		return fmt.Errorf("CA without a 20-byte subject key id")
	}
	return nil
}

func verify(leaf, root *x509.Certificate, dns string, ips ...string) error {
	roots := x509.NewCertPool()
	roots.AddCert(root)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: dns,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}); err != nil {
		return fmt.Errorf("Go does not verify %q against %q: %v", leaf.Subject.CommonName, root.Subject.CommonName, err)
	}
	for _, ip := range ips {
		if err := leaf.VerifyHostname(ip); err != nil {
			return err
		}
	}
	return nil
}

func keyPair(certBlock, keyBlock *pem.Block) error {
	_, err := tls.X509KeyPair(pem.EncodeToMemory(certBlock), pem.EncodeToMemory(keyBlock))
	if err != nil {
		return fmt.Errorf("certificate and key do not pair in Go: %v", err)
	}
	return nil
}

func samePublic(a, b crypto.PublicKey) bool {
	type eq interface{ Equal(crypto.PublicKey) bool }
	e, ok := a.(eq)
	return ok && e.Equal(b)
}

func judgeCert(c testCase, out string) error {
	str := func(k string) string { s, _ := c.Data[k].(string); return s }
	kind, sub, _ := strings.Cut(c.Name, "/")
	bs := blocks(out)
	switch kind {
	case "genPrivateKey":
		if len(bs) != 1 || !bytes.Equal(pem.EncodeToMemory(bs[0]), []byte(out)) {
			return fmt.Errorf("not one PEM block: %q", out)
		}
		_, err := checkKey(str("type"), bs[0])
		if err != nil {
			return err
		}
		if str("type") == "dsa" { // sprig parses DSA keys, Go cannot sign with them
			_, err := sprigRender(`{{ genCAWithKey "x" 1 .key }}`, map[string]any{"key": out})
			if err == nil || !strings.Contains(err.Error(), "does not implement crypto.Signer") {
				return fmt.Errorf("sprig's genCAWithKey on meshop's DSA key: %v", err)
			}
			return nil
		}
		// Go's sprig signs with meshop's key.
		ca, err := sprigRender(`{{ (genCAWithKey "x" 1 .key).Cert }}`, map[string]any{"key": out})
		if err != nil {
			return fmt.Errorf("sprig's genCAWithKey rejects meshop's key: %v", err)
		}
		cert, err := parseCert(blocks(ca)[0])
		if err != nil {
			return err
		}
		return cert.CheckSignatureFrom(cert)
	case "chain":
		if len(bs) != 4 {
			return fmt.Errorf("want CA cert, CA key, leaf cert, leaf key; got %d PEM blocks", len(bs))
		}
		ca, err := parseCert(bs[0])
		if err != nil {
			return err
		}
		leaf, err := parseCert(bs[2])
		if err != nil {
			return err
		}
		if err := checkShape(ca, "meshop-ca", 365, true); err != nil {
			return fmt.Errorf("CA: %v", err)
		}
		if err := checkShape(leaf, "svc.ns", 30, false); err != nil {
			return fmt.Errorf("leaf: %v", err)
		}
		if bs[1].Type != "RSA PRIVATE KEY" || bs[3].Type != "RSA PRIVATE KEY" {
			return fmt.Errorf("key types %s, %s", bs[1].Type, bs[3].Type)
		}
		if k := ca.PublicKey.(*rsa.PublicKey); k.N.BitLen() != 2048 {
			return fmt.Errorf("CA key of %d bits, sprig's are 2048", k.N.BitLen())
		}
		if err := ca.CheckSignatureFrom(ca); err != nil {
			return fmt.Errorf("CA self-signature: %v", err)
		}
		if !bytes.Equal(leaf.AuthorityKeyId, ca.SubjectKeyId) {
			return fmt.Errorf("leaf's authority key id is not the CA's subject key id")
		}
		wantIPs := []net.IP{net.ParseIP("10.0.0.1").To4(), net.ParseIP("::1"), net.ParseIP("192.168.1.2").To4()}
		if fmt.Sprint(leaf.IPAddresses) != fmt.Sprint(wantIPs) || fmt.Sprint(leaf.DNSNames) != "[svc.ns.svc svc]" {
			return fmt.Errorf("SANs %v %v", leaf.IPAddresses, leaf.DNSNames)
		}
		if err := verify(leaf, ca, "svc.ns.svc", "10.0.0.1", "::1", "192.168.1.2"); err != nil {
			return err
		}
		if err := keyPair(bs[0], bs[1]); err != nil {
			return err
		}
		if err := keyPair(bs[2], bs[3]); err != nil {
			return err
		}
		// The reverse: Go's sprig signs a certificate with meshop's CA.
		goLeaf, err := sprigRender(`{{ (genSignedCert "go-leaf" nil (list "go.example") 2 (buildCustomCert (b64enc .cert) (b64enc .key))).Cert }}`,
			map[string]any{"cert": string(pem.EncodeToMemory(bs[0])), "key": string(pem.EncodeToMemory(bs[1]))})
		if err != nil {
			return fmt.Errorf("sprig's genSignedCert with meshop's CA: %v", err)
		}
		gl, err := parseCert(blocks(goLeaf)[0])
		if err != nil {
			return err
		}
		return verify(gl, ca, "go.example")
	case "selfsigned":
		if len(bs) != 2 {
			return fmt.Errorf("want cert and key, got %d PEM blocks", len(bs))
		}
		cert, err := parseCert(bs[0])
		if err != nil {
			return err
		}
		if err := checkShape(cert, "host.example", 10, false); err != nil {
			return err
		}
		if err := cert.CheckSignatureFrom(cert); err == nil {
			return fmt.Errorf("a non-CA certificate must not verify as an issuer")
		}
		if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
			return fmt.Errorf("self-signature: %v", err)
		}
		if err := verify(cert, cert, "x.host.example", "127.0.0.1"); err != nil {
			return err
		}
		return keyPair(bs[0], bs[1])
	case "withkey":
		if len(bs) != 4 {
			return fmt.Errorf("want 4 PEM blocks, got %d", len(bs))
		}
		goKey, err := checkKey(sub, blocks(str("key"))[0])
		if err != nil && sub != "rsa" {
			return err
		}
		if sub == "rsa" {
			k, _ := x509.ParsePKCS1PrivateKey(blocks(str("key"))[0].Bytes)
			goKey = k.Public()
		}
		var certs []*x509.Certificate
		for _, i := range []int{0, 2, 3} {
			cert, err := parseCert(bs[i])
			if err != nil {
				return err
			}
			if !samePublic(goKey, cert.PublicKey) {
				return fmt.Errorf("certificate %q is not for Go's key", cert.Subject.CommonName)
			}
			certs = append(certs, cert)
		}
		if !bytes.Equal(pem.EncodeToMemory(bs[1]), []byte(pemOf(str("key"), blocks(str("key"))[0].Type))) {
			return fmt.Errorf("the CA's Key is not Go's key re-encoded as sprig does")
		}
		if err := checkShape(certs[0], "ca-with-key", 5, true); err != nil {
			return err
		}
		if err := certs[0].CheckSignatureFrom(certs[0]); err != nil {
			return fmt.Errorf("CA self-signature: %v", err)
		}
		if err := certs[1].CheckSignature(certs[1].SignatureAlgorithm, certs[1].RawTBSCertificate, certs[1].Signature); err != nil {
			return err
		}
		return verify(certs[2], certs[0], "leaf.example")
	case "goca":
		if len(bs) != 2 {
			return fmt.Errorf("want cert and key, got %d PEM blocks", len(bs))
		}
		ca, err := parseCert(blocks(str("cacert"))[0])
		if err != nil {
			return err
		}
		leaf, err := parseCert(bs[0])
		if err != nil {
			return err
		}
		if err := checkShape(leaf, "leaf", 5, false); err != nil {
			return err
		}
		if err := verify(leaf, ca, "leaf.example"); err != nil {
			return err
		}
		return keyPair(bs[0], bs[1])
	}
	return fmt.Errorf("unknown case kind %s", kind)
}
