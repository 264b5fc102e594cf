package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// pki holds the files a cluster's components read: a CA, the API server's serving
// certificate, the service-account signing key and the static token file.
type pki struct {
	dir        string
	caCert     []byte // PEM
	caKey      *ecdsa.PrivateKey
	caTemplate *x509.Certificate
	tokens     map[string]string // user -> bearer token
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err)
	}
	return n
}

func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{dir: dir, tokens: map[string]string{}}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "testcluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour * 30),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	if tmpl, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	p.caKey, p.caTemplate = key, tmpl
	p.caCert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(p.path("ca.crt"), p.caCert, 0o600); err != nil {
		return nil, err
	}
	if err := p.serving("apiserver", []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}); err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.path("sa.key"), "EC PRIVATE KEY", saDER); err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.path("sa.pub"), "PUBLIC KEY", pubDER); err != nil {
		return nil, err
	}
	return p, p.writeTokens()
}

// serving writes NAME.crt and NAME.key: a serving certificate signed by the CA.
func (p *pki) serving(name string, dns []string, ips []net.IP) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour * 30),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caTemplate, &key.PublicKey, p.caKey)
	if err != nil {
		return err
	}
	if err := writePEM(p.path(name+".crt"), "CERTIFICATE", der); err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(p.path(name+".key"), "EC PRIVATE KEY", keyDER)
}

// The users the static token file knows. The components authenticate as the users
// the bootstrap RBAC policy grants their rights to; admin is a cluster administrator,
// alice and bob start with no rights at all (tests grant what they need).
var users = []struct{ name, groups string }{
	{"admin", "system:masters"},
	{"alice", ""},
	{"bob", ""},
	{"system:kube-controller-manager", ""},
	{"system:kube-scheduler", ""},
	{"testcluster:nodes", "system:masters"},
}

func (p *pki) writeTokens() error {
	var b strings.Builder
	for i, u := range users {
		raw := make([]byte, 24)
		if _, err := rand.Read(raw); err != nil {
			return err
		}
		tok := hex.EncodeToString(raw)
		p.tokens[u.name] = tok
		// token,user,uid,"group1,group2"
		fmt.Fprintf(&b, "%s,%s,uid-%d", tok, u.name, i)
		if u.groups != "" {
			fmt.Fprintf(&b, ",%q", u.groups)
		}
		b.WriteString("\n")
	}
	return os.WriteFile(p.path("tokens.csv"), []byte(b.String()), 0o600)
}
