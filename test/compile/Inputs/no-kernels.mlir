// A spec with no function at all: nothing to package.
module {
}
