#!/usr/bin/env bash
# install-dynamodb-local.sh installs DynamoDB Local, the Java server the tests,
# examples and CI of this repository run against.
#
# It takes DynamoDB Local from the npm package amplify-dynamodb-simulator (which
# ships the upstream DynamoDBLocal.jar and DynamoDBLocal_lib/ unchanged under
# emulator/), checks the tarball against pinned checksums, and unpacks it into a
# cache folder outside the git tree:
#
#   ${DYNAMODB_LOCAL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ddbkit/dynamodb-local-1.25.1}
#
# so that DIR/DynamoDBLocal.jar and DIR/DynamoDBLocal_lib/ exist. The last line
# it prints on stdout is DIR; everything else goes to stderr.
#
# It is idempotent (a marker file, written last, makes a second run a no-op) and
# atomic (it unpacks into a temporary folder next to DIR and renames it into
# place), so concurrent runs are safe. It needs npm to install and Java 17 or
# newer to run DynamoDB Local; without them it fails saying what to install.
#
# Run DynamoDB Local by hand with:
#   cd DIR && java -Djava.library.path=DynamoDBLocal_lib -jar DynamoDBLocal.jar \
#       -inMemory -sharedDb -port 8000 -disableTelemetry
# (-sharedDb: one set of tables for all credentials and regions, as dynamotest
# runs it).
set -euo pipefail

readonly pkg=amplify-dynamodb-simulator
readonly version=2.9.30   # of the npm package
readonly jar_version=1.25.1 # of DynamoDB Local, the jar it ships
readonly want_sha1=a7ec81c475dc309aa15d047d8d03679c8be49189
readonly want_sha512=xTeeRLvzEfqyd5lh3bH4c0kHvSHHmmhD5ZDsHFKAQ5g2Zl6JqlFdutaQhCLHzxEp6Ry1o7TB6niIoXuQAnSewQ==
readonly min_java=17

dir="${DYNAMODB_LOCAL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ddbkit/dynamodb-local-$jar_version}"
readonly dir
readonly marker="$dir/.ddbkit-installed"
readonly marker_text="$pkg@$version sha512-$want_sha512"

log() { printf 'install-dynamodb-local: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# check_java fails unless a Java runtime of at least $min_java is on PATH.
check_java() {
	if ! command -v java >/dev/null 2>&1; then
		die "java not found on PATH: DynamoDB Local needs Java $min_java or newer (Debian/Ubuntu: apt-get install openjdk-17-jre-headless), or set DYNAMODB_ENDPOINT to use a running DynamoDB-compatible server instead"
	fi
	local line major
	line=$(java -version 2>&1 | head -n 1)
	# 'openjdk version "17.0.15" 2025-04-15' or 'java version "1.8.0_392"'.
	major=$(printf '%s\n' "$line" | sed -n 's/.*version "\([0-9][0-9]*\)\.\{0,1\}\([0-9]*\).*/\1 \2/p')
	if [[ -z $major ]]; then
		die "cannot tell the Java version from 'java -version' ($line): DynamoDB Local needs Java $min_java or newer"
	fi
	read -r first second <<<"$major"
	if [[ $first == 1 ]]; then first=${second:-0}; fi
	if ((first < min_java)); then
		die "found Java $first ($line) but DynamoDB Local needs Java $min_java or newer (Debian/Ubuntu: apt-get install openjdk-17-jre-headless)"
	fi
}

# sha512_base64 prints the base64 SHA-512 of file $1, as npm's integrity field has it.
sha512_base64() {
	if command -v openssl >/dev/null 2>&1; then
		openssl dgst -sha512 -binary "$1" | base64 | tr -d '\n'
	elif command -v python3 >/dev/null 2>&1; then
		python3 -c 'import base64,hashlib,sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1],"rb").read()).digest()).decode(), end="")' "$1"
	else
		die "need openssl or python3 to verify the download's SHA-512"
	fi
}

sha1_hex() {
	if command -v sha1sum >/dev/null 2>&1; then
		sha1sum "$1" | cut -d' ' -f1
	else
		openssl dgst -sha1 -r "$1" | cut -d' ' -f1
	fi
}

installed() {
	[[ -f $marker && -f $dir/DynamoDBLocal.jar && -d $dir/DynamoDBLocal_lib ]] &&
		[[ $(<"$marker") == "$marker_text" ]]
}

check_java

if installed; then
	printf '%s\n' "$dir"
	exit 0
fi

if [[ -e $dir ]]; then
	if [[ -d $dir ]] && rmdir "$dir" 2>/dev/null; then
		: # an empty folder: install into it
	elif [[ -f $dir/DynamoDBLocal.jar && ! -e $marker ]]; then
		# Not ours: someone unpacked DynamoDB Local there by hand. Use it as it is.
		log "using the DynamoDB Local found in $dir (not installed by this script)"
		printf '%s\n' "$dir"
		exit 0
	else
		die "$dir exists but is not a complete install of $pkg@$version: remove it and run this script again"
	fi
fi

command -v npm >/dev/null 2>&1 ||
	die "npm not found on PATH: it is needed to download DynamoDB Local ($pkg@$version); install Node.js and npm (Debian/Ubuntu: apt-get install npm), or set DYNAMODB_ENDPOINT to use a running DynamoDB-compatible server instead"
command -v tar >/dev/null 2>&1 || die "tar not found on PATH"

parent=$(dirname "$dir")
mkdir -p "$parent"
tmp=$(mktemp -d "$parent/.dynamodb-local-$jar_version.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

log "downloading $pkg@$version with npm pack (about 57 MB)"
# npm pack prints the tarball's name on stdout: keep our stdout for the folder.
(cd "$tmp" && npm pack --silent "$pkg@$version") >&2 ||
	die "npm pack $pkg@$version failed (is the npm registry reachable?)"
tarball="$tmp/$pkg-$version.tgz"
[[ -f $tarball ]] || die "npm pack did not produce $tarball"

got_sha1=$(sha1_hex "$tarball")
[[ $got_sha1 == "$want_sha1" ]] ||
	die "checksum mismatch for $pkg@$version: sha1 $got_sha1, want $want_sha1"
got_sha512=$(sha512_base64 "$tarball")
[[ $got_sha512 == "$want_sha512" ]] ||
	die "checksum mismatch for $pkg@$version: sha512-$got_sha512, want sha512-$want_sha512"

mkdir "$tmp/x"
tar -xzf "$tarball" -C "$tmp/x" package/emulator
stage="$tmp/x/package/emulator"
[[ -f $stage/DynamoDBLocal.jar && -d $stage/DynamoDBLocal_lib ]] ||
	die "$pkg@$version has no emulator/DynamoDBLocal.jar and emulator/DynamoDBLocal_lib/"
printf '%s\n' "$marker_text" >"$stage/.ddbkit-installed"

# rename(2) is atomic; when a concurrent run got there first it fails with
# "not empty", and that run's complete install is as good as ours.
if ! mv -T "$stage" "$dir" 2>/dev/null; then
	installed || die "could not move DynamoDB Local into $dir"
	log "another run installed DynamoDB Local in $dir first"
else
	log "installed DynamoDB Local $jar_version (from $pkg@$version) in $dir"
fi
printf '%s\n' "$dir"
