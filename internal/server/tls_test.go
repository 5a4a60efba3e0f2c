package server

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	gosql "database/sql"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"lockstep/internal/config"
)

// openTLS opens a pool to s as user over TLS, verifying the server's
// certificate against the CA in its data directory.
func (s *procServer) openTLS(t *testing.T, user, password string) *gosql.DB {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(s.datadir, caCertFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("ca.pem holds no certificate")
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, password, "tcp", s.addr
	cfg.TLS = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := gosql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestTLS: with --ssl (the default), the server generates a CA and a server certificate in its data
// directory (MySQL 8's auto_generate_certs), clients can verify it and
// connect over TLS, caching_sha2_password accounts log in over TLS (and
// still not without it), and a restart keeps the certificates.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	s := startInProcess(t, func(c *config.Config) { c.Datadir, c.SSL = dir, true })
	for _, f := range []string{caCertFile, caKeyFile, serverCertFile, serverKeyFile} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if key := f == caKeyFile || f == serverKeyFile; key && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	root := s.openTLS(t, "root", "")
	if got := queryString(t, root, "SELECT 1 + 1"); got != "2" {
		t.Fatalf("over TLS: %s", got)
	}
	var name, version, cipher string
	if err := root.QueryRow("SHOW SESSION STATUS LIKE 'Ssl_version'").Scan(&name, &version); err != nil || version != "TLSv1.3" {
		t.Errorf("Ssl_version over TLS: %q, %v", version, err)
	}
	if err := root.QueryRow("SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil || !strings.HasPrefix(cipher, "TLS_") {
		t.Errorf("Ssl_cipher over TLS: %q, %v", cipher, err)
	}
	if err := s.db.QueryRow("SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil || cipher != "" {
		t.Errorf("Ssl_cipher on a plain connection: %q, %v", cipher, err)
	}
	s.exec(t, "CREATE USER 'sha'@'%' IDENTIFIED WITH caching_sha2_password BY 'pw2'")
	if got := queryString(t, s.openTLS(t, "sha", "pw2"), "SELECT CURRENT_USER()"); got != "sha@%" {
		t.Errorf("caching_sha2_password over TLS: CURRENT_USER() = %s", got)
	}
	wantErrNum(t, "caching_sha2_password over TLS, wrong password", s.openTLS(t, "sha", "nope").Ping(), 1045)
	wantErrNum(t, "caching_sha2_password without TLS", s.openAs(t, "sha", "pw2").Ping(), 1045)

	// What wireConn does on the plain packet stream works over TLS too,
	// since TLS is ended below it (tlsterm.go): COM_STATISTICS, an OK
	// packet's info string with its length, prepared executes answered by
	// the hook.
	if bin, err := exec.LookPath("mysqladmin"); err == nil {
		host, port, _ := net.SplitHostPort(s.addr)
		out, err := exec.Command(bin, "-h"+host, "-P"+port, "-uroot", "--ssl", "status").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "Uptime: ") {
			t.Errorf("mysqladmin --ssl status: %q, %v", out, err)
		}
	}
	if bin, err := exec.LookPath("mysql"); err == nil {
		host, port, _ := net.SplitHostPort(s.addr)
		s.exec(t, "CREATE DATABASE tl")
		s.exec(t, "CREATE TABLE tl.t (id INT PRIMARY KEY, v INT)")
		s.exec(t, "INSERT INTO tl.t VALUES (1, 1)")
		out, err := exec.Command(bin, "-h"+host, "-P"+port, "-uroot", "--ssl", "--ssl-ca="+filepath.Join(dir, caCertFile),
			"--ssl-verify-server-cert", "-vvv", "-e", "status; UPDATE tl.t SET v = 2 WHERE v + 0 = 1").CombinedOutput()
		for _, want := range []string{"Cipher in use is ", "Uptime:", "Rows matched: 1  Changed: 1  Warnings: 0"} {
			if err != nil || !strings.Contains(string(out), want) {
				t.Errorf("mysql --ssl: no %q in %q (%v)", want, out, err)
			}
		}
		before := s.status(t, "GLOBAL", "Lockstep_fast_protocol_executes")
		stmt, err := root.Prepare("SELECT v FROM tl.t WHERE id = ?")
		if err != nil {
			t.Fatal(err)
		}
		var v int
		if err := stmt.QueryRow(1).Scan(&v); err != nil || v != 2 {
			t.Fatalf("prepared over TLS: %d, %v", v, err)
		}
		stmt.Close()
		if s.status(t, "GLOBAL", "Lockstep_fast_protocol_executes") == before {
			t.Error("a prepared execute over TLS did not go through the hook")
		}
		// The hook's PREPARE rewrite too: vitess's parser lacks FOR SHARE.
		if err := root.QueryRow("SELECT v FROM tl.t WHERE id = ? FOR SHARE", 1).Scan(&v); err != nil {
			t.Errorf("prepared FOR SHARE over TLS: %v", err)
		}
	}

	cert, err := os.ReadFile(filepath.Join(dir, serverCertFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s = startInProcess(t, func(c *config.Config) { c.Datadir, c.SSL = dir, true })
	again, err := os.ReadFile(filepath.Join(dir, serverCertFile))
	if err != nil || !bytes.Equal(cert, again) {
		t.Fatalf("server-cert.pem changed across a restart (%v)", err)
	}
	if got := queryString(t, s.openTLS(t, "sha", "pw2"), "SELECT CURRENT_USER()"); got != "sha@%" {
		t.Errorf("after a restart, over TLS: CURRENT_USER() = %s", got)
	}
}

// TestTLSCertificateErrors: a server key without its certificate stops the
// start with a clear error; a damaged certificate too.
func TestTLSCertificateErrors(t *testing.T) {
	// With --ssl=OFF nothing is generated.
	plain := t.TempDir()
	s := startInProcess(t, func(c *config.Config) { c.Datadir, c.SSL = plain, false })
	if _, err := os.Stat(filepath.Join(plain, serverCertFile)); !os.IsNotExist(err) {
		t.Errorf("without --ssl: %s: %v", serverCertFile, err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	if _, err := serverTLS(dir, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, serverCertFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := serverTLS(dir, "127.0.0.1"); err == nil {
		t.Error("a key without its certificate: no error")
	}
	if err := os.WriteFile(filepath.Join(dir, serverCertFile), []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := serverTLS(dir, "127.0.0.1"); err == nil {
		t.Error("a damaged certificate: no error")
	}
}
