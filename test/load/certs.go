// Package load drives function servers over gRPC with mTLS on loopback and
// measures their latency, throughput and memory.
package load

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is a throwaway CA with one server and one client certificate, as
// Crossplane's package runtime would issue them.
type PKI struct {
	CA     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte
	Client tls.Certificate
}

// NewPKI makes a CA and a client certificate signed by it.
func NewPKI() (*PKI, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "inferno-load-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p := &PKI{CA: ca, caKey: key, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	certPEM, keyPEM, err := p.issue("crossplane", x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	p.Client, err = tls.X509KeyPair(certPEM, keyPEM)
	return p, err
}

// WriteServerCerts writes tls.crt, tls.key and ca.crt for a function server
// into dir, the layout --tls-certs-dir reads.
func (p *PKI) WriteServerCerts(dir string) error {
	certPEM, keyPEM, err := p.issue("localhost", x509.ExtKeyUsageServerAuth)
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM, "ca.crt": p.caPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// ClientTLS is the client side of mTLS: the client certificate, trusting
// only the CA.
func (p *PKI) ClientTLS() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(p.CA)
	return &tls.Config{Certificates: []tls.Certificate{p.Client}, RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
}

func (p *PKI) issue(cn string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, &key.PublicKey, p.caKey)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}
