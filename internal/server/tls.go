package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// TLS, as MySQL 8 offers it by default.
//
// MySQL 8 generates a CA and a server certificate in its data directory at
// first start (auto_generate_certs) and accepts TLS from every client that
// asks; MySQL 8 clients ask by default. Lockstep does the same with
// MySQL's file names: ca.pem and ca-key.pem (a self-signed CA),
// server-cert.pem and server-key.pem (signed by it, valid for localhost,
// 127.0.0.1, ::1 and the bind address). Existing files are used as they
// are, so a user can put their own there. Plain connections stay allowed.
//
// Besides encryption, TLS is what lets caching_sha2_password accounts log
// in: go-mysql-server keeps no fast-authentication cache, so every login
// takes the full exchange, which sends the password and is refused on a
// plain connection.

const (
	caCertFile     = "ca.pem"
	caKeyFile      = "ca-key.pem"
	serverCertFile = "server-cert.pem"
	serverKeyFile  = "server-key.pem"
	certValidity   = 10 * 365 * 24 * time.Hour // MySQL's are valid 10 years
)

// serverTLS returns the TLS configuration from the server certificate in
// datadir, generating the certificates first if there is none.
func serverTLS(datadir, bindAddress string) (*tls.Config, error) {
	certPath := filepath.Join(datadir, serverCertFile)
	keyPath := filepath.Join(datadir, serverKeyFile)
	_, certErr := os.Stat(certPath)
	_, keyErr := os.Stat(keyPath)
	switch {
	case errors.Is(certErr, os.ErrNotExist) && errors.Is(keyErr, os.ErrNotExist):
		if err := generateCerts(datadir, bindAddress); err != nil {
			return nil, fmt.Errorf("generate TLS certificates in %s: %w", datadir, err)
		}
	case certErr != nil || keyErr != nil:
		return nil, fmt.Errorf("TLS: need both %s and %s in %s (%v, %v)", serverCertFile, serverKeyFile, datadir, certErr, keyErr)
	}
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return nil, fmt.Errorf("TLS: load %s and %s: %w", certPath, keyPath, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// generateCerts writes a CA and a server certificate signed by it.
func generateCerts(dir, bindAddress string) error {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "lockstep_Auto_Generated_CA_Certificate"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "lockstep_Auto_Generated_Server_Certificate"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if ip := net.ParseIP(bindAddress); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
		srvTmpl.IPAddresses = append(srvTmpl.IPAddresses, ip)
	} else if ip == nil && bindAddress != "" && bindAddress != "localhost" {
		srvTmpl.DNSNames = append(srvTmpl.DNSNames, bindAddress)
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	// Keys first and certificates last: a crash in between leaves no
	// server certificate, and the next start generates everything again.
	for _, f := range []struct {
		name, typ string
		der       []byte
		key       *ecdsa.PrivateKey
	}{
		{caKeyFile, "", nil, caKey},
		{serverKeyFile, "", nil, srvKey},
		{caCertFile, "CERTIFICATE", caDER, nil},
		{serverCertFile, "CERTIFICATE", srvDER, nil},
	} {
		typ, der := f.typ, f.der
		mode := os.FileMode(0o644)
		if f.key != nil {
			if der, err = x509.MarshalPKCS8PrivateKey(f.key); err != nil {
				return err
			}
			typ, mode = "PRIVATE KEY", 0o600
		}
		if err := writeFileSync(filepath.Join(dir, f.name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
