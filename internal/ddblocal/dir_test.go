package ddblocal

import (
	"archive/zip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// makeInstall lays out dir as DynamoDB Local's download does, with a jar
// whose Maven metadata is pom (no metadata when pom is "").
func makeInstall(t *testing.T, dir, pom string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, libName), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, jarName))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	if pom != "" {
		w, err := zw.Create(pomPath)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(pom)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDirFromEnvChecked: a DYNAMODB_LOCAL_DIR that cannot be used is refused
// before anything is installed or run, with an error naming the variable and
// the fix; one that can is used as it is.
func TestDirFromEnvChecked(t *testing.T) {
	root := t.TempDir()
	// Should the check of a relative path ever fail, what it installs lands
	// in a temporary folder, not in the source tree.
	t.Chdir(root)
	good := filepath.Join(root, "good")
	makeInstall(t, good, "version=2.6.0\ngroupId=com.amazonaws\n")
	noLib := filepath.Join(root, "nolib")
	makeInstall(t, noLib, "version=1.0\n")
	if err := os.RemoveAll(filepath.Join(noLib, libName)); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "other")
	if err := os.MkdirAll(filepath.Join(other, "stuff"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	jarDir := filepath.Join(root, "jardir")
	if err := os.MkdirAll(filepath.Join(jarDir, jarName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(jarDir, libName), 0o755); err != nil {
		t.Fatal(err)
	}

	bad := []struct{ dir, want string }{
		{"relative/dynamodb-local", "not an absolute path"},
		{file, "is a file, not a folder"},
		{noLib, "no DynamoDBLocal_lib/"},
		{other, "has no DynamoDBLocal.jar"},
		{jarDir, "DynamoDBLocal.jar is not a file"},
	}
	for _, tc := range bad {
		t.Setenv(EnvLocalDir, tc.dir)
		_, err := Dir(t.Context())
		if err == nil {
			t.Errorf("%s=%q: Dir succeeded; want an error", EnvLocalDir, tc.dir)
			continue
		}
		for _, w := range []string{EnvLocalDir, tc.want} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s=%q: Dir: %v\nwant it to say %q", EnvLocalDir, tc.dir, err, w)
			}
		}
		if strings.Contains(err.Error(), "install-dynamodb-local") {
			t.Errorf("%s=%q: the install script ran: %v", EnvLocalDir, tc.dir, err)
		}
	}

	t.Setenv(EnvLocalDir, good)
	dir, err := Dir(t.Context())
	if err != nil || dir != good {
		t.Fatalf("Dir with %s=%q = %q, %v; want it as it is", EnvLocalDir, good, dir, err)
	}
	if v, err := JarVersion(dir); err != nil || v != "2.6.0" {
		t.Errorf("JarVersion = %q, %v; want 2.6.0", v, err)
	}
}

func TestDirMissingOrEmptyIsToBeInstalled(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{filepath.Join(root, "missing"), root} {
		installed, err := checkDir(dir, true)
		if installed || err != nil {
			t.Errorf("checkDir(%q) = %v, %v; want false, nil (install there)", dir, installed, err)
		}
	}
}

// TestDefaultDirBroken: a default folder that is not an installation names
// the folder and the fixes, not the variable's value.
func TestDefaultDirBroken(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "junk"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := checkDir(dir, false)
	if err == nil || !strings.Contains(err.Error(), "remove it") || !strings.Contains(err.Error(), EnvLocalDir) {
		t.Errorf("checkDir of a folder with other files: %v; want remove-it advice naming %s", err, EnvLocalDir)
	}
}

func TestJarVersion(t *testing.T) {
	dir := t.TempDir()
	makeInstall(t, dir, "")
	if _, err := JarVersion(dir); err == nil || !strings.Contains(err.Error(), "pom.properties") {
		t.Errorf("JarVersion of a jar without Maven metadata: %v; want an error naming it", err)
	}
	if v := versionOf(dir); v != "unknown" {
		t.Errorf("versionOf = %q, want unknown", v)
	}
	if err := os.WriteFile(filepath.Join(dir, jarName), []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := JarVersion(dir); err == nil {
		t.Error("JarVersion of a file that is no jar succeeded")
	}
}

// TestJarVersionInstalled reads the version of the installed DynamoDB Local.
func TestJarVersionInstalled(t *testing.T) {
	if os.Getenv(EnvLocalDir) != "" {
		t.Skip(EnvLocalDir + " is set: its version is its own")
	}
	dir, err := Dir(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if v, err := JarVersion(dir); err != nil || v != DefaultVersion {
		t.Errorf("JarVersion(%s) = %q, %v; want %s", dir, v, err, DefaultVersion)
	}
}

func TestParsePomVersion(t *testing.T) {
	good := map[string]string{
		"version=1.25.1\ngroupId=com.amazonaws\n":    "1.25.1",
		"#Generated by Maven\r\nversion = 2.6.0\r\n": "2.6.0",
		"! c\nversion: 3.0.0-beta+1\n":               "3.0.0-beta+1",
		"versions=9\nversion=1\n":                    "1",
	}
	for in, want := range good {
		if got, err := parsePomVersion([]byte(in)); err != nil || got != want {
			t.Errorf("parsePomVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "groupId=x\n", "version=\n", "version=1 2\n", "version=$(rm -rf /)\n",
		"version=" + strings.Repeat("1", 65) + "\n", "# version=1\n"} {
		if got, err := parsePomVersion([]byte(in)); err == nil {
			t.Errorf("parsePomVersion(%q) = %q; want an error", in, got)
		}
	}
}

func FuzzParsePomVersion(f *testing.F) {
	f.Add([]byte("version=1.25.1\ngroupId=com.amazonaws\n"))
	f.Add([]byte("version : 2\r\n"))
	f.Add([]byte("#x\nversion=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parsePomVersion(data)
		if err != nil {
			return
		}
		if v == "" || len(v) > 64 || strings.ContainsAny(v, " \t\r\n=:#!$`'\"\\/") {
			t.Fatalf("parsePomVersion(%q) = %q: not a plain version", data, v)
		}
		if !strings.Contains(string(data), v) {
			t.Fatalf("parsePomVersion(%q) = %q, which is not in the input", data, v)
		}
	})
}

// TestNPMVersionChecked: DYNAMODB_LOCAL_NPM_VERSION is checked before
// anything is installed or run, naming the variable and the fix.
func TestNPMVersionChecked(t *testing.T) {
	for _, v := range []string{"2.9", "x", "2.9.30;rm -rf /", " 2.9.30", "2.9.30-", "v2.9.30", "1.2.3.4", "01234567890.0.0"} {
		t.Setenv(EnvNPMVersion, v)
		_, err := Dir(t.Context())
		if err == nil || !strings.Contains(err.Error(), EnvNPMVersion) || !strings.Contains(err.Error(), "MAJOR.MINOR.PATCH") {
			t.Errorf("%s=%q: Dir: %v; want an error naming the variable and the form", EnvNPMVersion, v, err)
		}
	}
	t.Setenv(EnvNPMVersion, "2.9.29")
	t.Setenv(EnvLocalDir, "")
	if _, err := Dir(t.Context()); err == nil || !strings.Contains(err.Error(), "needs "+EnvLocalDir) {
		t.Errorf("%s=2.9.29 without %s: Dir: %v; want an error saying it needs the folder", EnvNPMVersion, EnvLocalDir, err)
	}
	// With a folder that holds an installation, the version is not needed.
	good := filepath.Join(t.TempDir(), "good")
	makeInstall(t, good, "version=9.9.9\n")
	t.Setenv(EnvLocalDir, good)
	if dir, err := Dir(t.Context()); err != nil || dir != good {
		t.Errorf("Dir = %q, %v; want %s", dir, err, good)
	}
	for _, v := range []string{"2.9.30", "10.0.0-beta.1", "0.0.0"} {
		if err := checkNPMVersion(v); err != nil {
			t.Errorf("checkNPMVersion(%q) = %v", v, err)
		}
	}
}

// FuzzCheckNPMVersion: what the Go check accepts, the install script's
// pattern accepts too, and it is safe on a shell command line.
func FuzzCheckNPMVersion(f *testing.F) {
	for _, s := range []string{"2.9.30", "1.0.0-rc.1", "2.9", "1.2.3-", "1.2.3-a b"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,64})?$`) // the script's
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := checkNPMVersion(v) == nil, re.MatchString(v); got != want {
			t.Fatalf("checkNPMVersion(%q) accepts=%v, the install script's pattern accepts=%v", v, got, want)
		}
	})
}
