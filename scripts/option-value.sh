# Sourced by the scripts whose options take a value, given as --name VALUE or as --name=VALUE:
#
#   --jobs|--jobs=*) option_value jobs "$@"; shift "$OPTION_WORDS" ;;
#
# sets the variable `jobs` to the value, and OPTION_WORDS to the number of arguments the option
# took (2 or 1). Without a value (a last `--jobs`), `set -u` stops the script, as $2 would.
option_value() {
  local var=$1
  shift
  if [[ $1 == *=* ]]; then
    printf -v "$var" '%s' "${1#*=}"
    OPTION_WORDS=1
  else
    printf -v "$var" '%s' "$2"
    OPTION_WORDS=2
  fi
}
