# Debian packages (debian/, debhelper with dh-dkms), built in a copy of
# the tree so the checkout stays as it is; the .debs, the .changes and
# lintian's report go to build/deb/.
#
#   make deb             sch-arbtable-dkms, tc-arbtable (for the installed
#                        tc's iproute2, exactly), arbtable-tools,
#                        libarbtable0, libarbtable-dev, arbtable-cni; then
#                        lintian (build/deb/lintian.txt; an error or a
#                        warning fails)
#   make packages-check  tests/packages/check.sh: the packages installed
#                        into a fresh Debian 12 root booted on 6.1 and on
#                        Debian's 7.2 image, DKMS builds, the README's first
#                        example, purge, nothing left (two TCG guests one
#                        after the other: 6.1 took 1492 s on a loaded
#                        2-core host, dpkg -i with the DKMS build 932 s)
#   make setup-check     tests/setup/refuse-check.sh: setup refuses a host
#                        that is not Debian 12 before touching anything;
#                        tests/setup/go-toolchain-check.sh: the Go finder;
#                        tests/setup/dpkg-path-check.sh: apt's DPkg::Path
#                        reaches a postinst's run-parts
#   make check-fresh     tests/setup/fresh-check.sh: scripts/setup.sh the
#                        first time in a clean Debian 12 root, then the
#                        module built and one VM test booted from it

DEB_OUT := $(BUILD)/deb
DEB_SRC := $(DEB_OUT)/src/sch-arbtable-$(ARBTABLE_VERSION)

.PHONY: deb packages-check setup-check check-fresh
deb:
	@command -v dpkg-buildpackage >/dev/null && command -v dh_dkms >/dev/null && command -v lintian >/dev/null || \
		{ echo "deb: needs debhelper, dh-dkms, lintian, fakeroot (scripts/setup.sh installs them)" >&2; exit 1; }
	@rm -rf $(DEB_OUT) && mkdir -p $(DEB_SRC)
	@git ls-files -z --cached --others --exclude-standard | \
		grep -zv -e '^build/' | xargs -0 cp --parents -a -t $(DEB_SRC)
	cd $(DEB_SRC) && dpkg-buildpackage -b -us -uc -rfakeroot >$(DEB_OUT)/build.log 2>&1 || \
		{ tail -n 40 $(DEB_OUT)/build.log >&2; echo "deb: dpkg-buildpackage failed ($(DEB_OUT)/build.log)" >&2; exit 1; }
	@mv $(DEB_OUT)/src/*.deb $(DEB_OUT)/src/*.changes $(DEB_OUT)/src/*.buildinfo $(DEB_OUT)/
	@rm -rf $(DEB_OUT)/src
	@lintian --info --display-info $(DEB_OUT)/*.changes >$(DEB_OUT)/lintian.txt 2>&1; \
		cat $(DEB_OUT)/lintian.txt; \
		if grep -q '^[EW]:' $(DEB_OUT)/lintian.txt; then echo "deb: lintian reports errors or warnings" >&2; exit 1; fi
	@ls -l $(DEB_OUT)/*.deb

packages-check:
	@bash tests/packages/check.sh

setup-check:
	@bash tests/setup/refuse-check.sh && bash tests/setup/go-toolchain-check.sh && bash tests/setup/dpkg-path-check.sh

check-fresh:
	@bash tests/setup/fresh-check.sh
