package sqlfront

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"golang.org/x/sys/unix"
)

// Files on the server's host: LOAD_FILE, SELECT ... INTO OUTFILE and
// DUMPFILE, LOAD DATA INFILE.
//
// MySQL's rules, as lockstep applies them:
//
//   - the FILE privilege on *.* is needed (LOAD_FILE without it is NULL;
//     INTO OUTFILE/DUMPFILE and LOAD DATA INFILE are 1045);
//   - secure_file_priv names the one directory these may touch (NULL: no
//     directory at all; empty: anywhere the process can reach). A path
//     outside it is 1290 (LOAD_FILE: NULL);
//   - lockstep adds one rule MySQL leaves to the operator: nothing under
//     the data directory, whatever secure_file_priv says (the log, the
//     checkpoints, the TLS private key and auto.cnf live there; a file
//     written into log/ once made the next start refuse). The server
//     refuses a secure_file_priv that overlaps the data directory.
//
// The check is made on the path as the kernel resolves it, not on its
// text: the file is opened with openat2(RESOLVE_BENEATH) relative to the
// secure directory, so neither "..", an absolute symlink nor a symlink
// swapped in after the check leads outside it. With an empty
// secure_file_priv the parent directory is resolved (EvalSymlinks), checked
// against the data directory, and the last component opened with
// O_NOFOLLOW; a directory swapped between the check and the open can still
// escape there, which is one more reason MySQL advises a directory.

// FileAccess is the server's file policy (SetFileAccess).
type FileAccess struct {
	// Disabled is secure_file_priv = NULL: no file access at all.
	Disabled bool
	// SecureDir is secure_file_priv, absolute and with symlinks resolved;
	// "" means anywhere (except the data directory).
	SecureDir string
	// DataDir is the data directory, absolute and resolved; "" for a
	// frontend without one (tests).
	DataDir string
}

// SetFileAccess installs the server's file policy.
func (fe *Frontend) SetFileAccess(fa FileAccess) { fe.files.Store(&fa) }

// SecureFilePrivValue is @@secure_file_priv as MySQL shows it: NULL when
// disabled, else the directory with a trailing separator ("" for none).
func (fa FileAccess) SecureFilePrivValue() any {
	if fa.Disabled {
		return nil
	}
	if fa.SecureDir == "" {
		return ""
	}
	return strings.TrimSuffix(fa.SecureDir, string(filepath.Separator)) + string(filepath.Separator)
}

// errSecureFilePriv is MySQL's 1290 for a path secure_file_priv does not
// allow.
func errSecureFilePriv() error {
	return mysql.NewSQLError(mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState,
		"The MySQL server is running with the --secure-file-priv option so it cannot execute this statement")
}

// errFileExists is MySQL's 1086: INTO OUTFILE/DUMPFILE never overwrite.
func errFileExists(name string) error {
	return mysql.NewSQLError(mysql.ERFileExists, mysql.SSUnknownSQLState, "File '%s' already exists", name)
}

// errCantOpen is MySQL's 1 / 29 family for a file that cannot be opened:
// MySQL 8 says "File '%s' not found (OS errno %d - %s)" (29) for reads and
// "Can't create/write to file '%s' (OS errno %d - %s)" (1) for writes.
func errCantOpen(name string, write bool, err error) error {
	errno := 0
	msg := err.Error()
	var en unix.Errno
	if errors.As(err, &en) {
		errno, msg = int(en), en.Error()
	}
	if len(msg) > 0 {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	if write {
		return mysql.NewSQLError(1, mysql.SSUnknownSQLState,
			"Can't create/write to file '%s' (OS errno %d - %s)", name, errno, msg)
	}
	return mysql.NewSQLError(29, mysql.SSUnknownSQLState,
		"File '%s' not found (OS errno %d - %s)", name, errno, msg)
}

// accessDeniedHere is MySQL's 1045 for a statement the session's account
// may not run (FILE): "Access denied for user 'u'@'host' (using password:
// YES)", YES when the account has a password (a login to it gave one).
func (fe *Frontend) accessDeniedHere(ctx *sql.Context) error {
	client := ctx.Session.Client()
	host := sessionHost(ctx)
	using := "NO"
	mdb := fe.Engine.Analyzer.Catalog.MySQLDb
	rd := mdb.Reader()
	if u := mdb.GetUser(rd, client.User, client.Address, false); u != nil && u.AuthString != "" {
		using = "YES"
	}
	rd.Close()
	return mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError,
		"Access denied for user '%s'@'%s' (using password: %s)", client.User, host, using)
}

// openServerFile opens name on the server's host under the file policy:
// for reading (LOAD_FILE, LOAD DATA INFILE), or created for writing, never
// over an existing file (INTO OUTFILE/DUMPFILE). A relative name is taken
// from the data directory, as MySQL does, and so refused. The error is
// MySQL's: 1290 for a path the policy refuses, 1086 for an existing file,
// else the OS error.
func (fe *Frontend) openServerFile(name string, write bool) (*os.File, error) {
	fa := fe.files.Load()
	if fa == nil || fa.Disabled || name == "" || strings.IndexByte(name, 0) >= 0 {
		return nil, errSecureFilePriv()
	}
	path := name
	if !filepath.IsAbs(path) {
		if fa.DataDir == "" {
			return nil, errSecureFilePriv()
		}
		path = filepath.Join(fa.DataDir, path)
	}
	path = filepath.Clean(path)
	// Resolve the directory the file is in: the policy is about where the
	// kernel puts the file, not about how the name is spelled.
	dir, base := filepath.Split(path)
	if base == "" || base == "." || base == ".." {
		return nil, errCantOpen(name, write, unix.EISDIR)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, errCantOpen(name, write, err)
	}
	if fa.DataDir != "" && within(fa.DataDir, realDir) {
		return nil, errSecureFilePriv()
	}
	flags := unix.O_RDONLY
	if write {
		flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL
	}
	flags |= unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK
	var fd int
	if fa.SecureDir != "" {
		rel, err := filepath.Rel(fa.SecureDir, filepath.Join(realDir, base))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, errSecureFilePriv()
		}
		fd, err = openBeneath(fa.SecureDir, rel, flags)
		if err != nil {
			if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP) {
				return nil, errSecureFilePriv()
			}
			if write && errors.Is(err, unix.EEXIST) {
				return nil, errFileExists(name)
			}
			return nil, errCantOpen(name, write, err)
		}
	} else {
		fd, err = unix.Open(filepath.Join(realDir, base), flags, 0o640)
		if err != nil {
			if errors.Is(err, unix.ELOOP) {
				return nil, errSecureFilePriv() // a symlink as the last component
			}
			if write && errors.Is(err, unix.EEXIST) {
				return nil, errFileExists(name)
			}
			return nil, errCantOpen(name, write, err)
		}
	}
	f := os.NewFile(uintptr(fd), name)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, errCantOpen(name, write, err)
	}
	if !st.Mode().IsRegular() { // a FIFO or device would block or never end
		f.Close()
		return nil, errSecureFilePriv()
	}
	// The non-blocking open was only for a FIFO; a regular file ignores it,
	// but clear it so reads behave as usual.
	if err := unix.SetNonblock(fd, false); err != nil {
		f.Close()
		return nil, errCantOpen(name, write, err)
	}
	return f, nil
}

// openBeneath opens rel under dir without leaving it: openat2 with
// RESOLVE_BENEATH, or, on a kernel without openat2, a component-by-component
// walk that refuses every symlink.
func openBeneath(dir, rel string, flags int) (int, error) {
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dfd)
	how := &unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	if flags&unix.O_CREAT != 0 {
		how.Mode = 0o640 // openat2 refuses a mode without O_CREAT
	}
	fd, err := unix.Openat2(dfd, rel, how)
	if err != unix.ENOSYS {
		return fd, err
	}
	// No openat2: walk the directories with O_NOFOLLOW.
	parts := strings.Split(rel, string(filepath.Separator))
	cur, err := unix.Dup(dfd)
	if err != nil {
		return -1, err
	}
	for i, p := range parts {
		if p == ".." {
			unix.Close(cur)
			return -1, unix.EXDEV
		}
		if i == len(parts)-1 {
			fd, err := unix.Openat(cur, p, flags|unix.O_NOFOLLOW, 0o640)
			unix.Close(cur)
			return fd, err
		}
		next, err := unix.Openat(cur, p, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(cur)
		if err != nil {
			return -1, err
		}
		cur = next
	}
	unix.Close(cur)
	return -1, fmt.Errorf("empty path")
}

// within reports whether path is dir or lies under it (both clean and
// absolute).
func within(dir, path string) bool {
	if path == dir {
		return true
	}
	return strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// ResolveSecureFilePriv checks a secure_file_priv directory against the
// data directory and returns both resolved: the directory must exist and
// must neither be the data directory nor lie inside or around it.
func ResolveSecureFilePriv(secureDir, dataDir string) (FileAccess, error) {
	realData, err := filepath.EvalSymlinks(dataDir)
	if err != nil {
		return FileAccess{}, fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	if realData, err = filepath.Abs(realData); err != nil {
		return FileAccess{}, err
	}
	fa := FileAccess{DataDir: realData}
	if secureDir == "" {
		return fa, nil
	}
	real, err := filepath.EvalSymlinks(secureDir)
	if err != nil {
		return FileAccess{}, fmt.Errorf("secure-file-priv %s: %w", secureDir, err)
	}
	if real, err = filepath.Abs(real); err != nil {
		return FileAccess{}, err
	}
	st, err := os.Stat(real)
	if err != nil {
		return FileAccess{}, fmt.Errorf("secure-file-priv %s: %w", secureDir, err)
	}
	if !st.IsDir() {
		return FileAccess{}, fmt.Errorf("secure-file-priv %s: not a directory", secureDir)
	}
	if within(realData, real) || within(real, realData) {
		return FileAccess{}, fmt.Errorf("secure-file-priv %s: must not be the data directory %s, inside it or around it", secureDir, dataDir)
	}
	fa.SecureDir = real
	return fa, nil
}
