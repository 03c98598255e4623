# install.mk — make install / uninstall with the GNU conventions.
# Included by the top-level Makefile after its variables, before its rules.
#
#   make install   [PREFIX=/usr/local] [DESTDIR=/stage] [sysconfdir=DIR] ...
#   make uninstall (the same variables)
#
# Installs lumend and the database tools in $(sbindir), lumenbench in
# $(bindir), the schema files in $(datadir)/lumen/schema, the example
# configuration as $(sysconfdir)/lumen/slapd.conf.example (and as
# slapd.conf when there is none yet: an operator's edits are never
# overwritten), the man pages (man/, their @PATH@ words replaced) in
# $(mandir), the systemd unit in $(systemdunitdir) and README.md in
# $(docdir).
#
#   make check-man the man pages render without warnings and lumen.conf(5)
#                  lists exactly the directives the config code reads
#   make deb       the Debian package (debian/), built by dpkg-buildpackage
#                  -us -uc -b in a copy of the tree: $(BUILD)/deb/*.deb DESTDIR stages the whole tree under another root (packages)
# and writes nothing outside it.
#
# lumend's default configuration file and the directory a relative
# `include` falls back to are compiled in from sysconfdir and datadir:
# build and install with the same values. Changing them (or VERSION)
# rebuilds what embeds them ($(BUILD)/stamp-*).

PREFIX         ?= /usr/local
prefix         ?= $(PREFIX)
exec_prefix    ?= $(prefix)
bindir         ?= $(exec_prefix)/bin
sbindir        ?= $(exec_prefix)/sbin
sysconfdir     ?= $(prefix)/etc
datarootdir    ?= $(prefix)/share
datadir        ?= $(datarootdir)
mandir         ?= $(datarootdir)/man
docdir         ?= $(datarootdir)/doc/lumen
systemdunitdir ?= $(prefix)/lib/systemd/system
INSTALL        ?= install

LUMEN_CONF_DIR   = $(sysconfdir)/lumen
LUMEN_DATA_DIR   = $(datadir)/lumen
INSTALL_SBIN    := lumend lumenadd lumencat lumenindex lumenpasswd lumenbackup lumenconf
INSTALL_BIN     := lumenbench
INSTALL_SCHEMA  := $(notdir $(wildcard schema/*.schema))
MAN_PAGES       := $(notdir $(wildcard man/*.[1-8]))

# --- what the build embeds ---------------------------------------------------
# Each stamp holds the values; it is rewritten (and what depends on it
# rebuilt) only when they change, as git's GIT-CFLAGS.
STAMP_VERSION := $(VERSION)
STAMP_PATHS   := $(LUMEN_CONF_DIR) $(LUMEN_DATA_DIR)
$(BUILD)/stamp-version $(BUILD)/stamp-paths: FORCE
	@mkdir -p $(@D)
	@text='$(if $(filter %version,$@),$(STAMP_VERSION),$(STAMP_PATHS))'; \
	 [ "$$(cat $@ 2>/dev/null)" = "$$text" ] || echo "$$text" > $@
.PHONY: FORCE
FORCE:

# Every object may show the version (include/proto/version.h).
STAMPED_OBJS := $(foreach l,$(LAYERS),$(OBJS_$(l))) $(BUILD)/obj/server/main.o \
                $(patsubst src/%.c,$(BUILD)/obj/%.o,$(wildcard src/tools/*.c)) \
                $(patsubst bench/%.c,$(BUILD)/obj/bench/%.o,$(wildcard bench/*.c))
$(STAMPED_OBJS) $(UNIT_BINS): $(BUILD)/stamp-version

$(BUILD)/obj/config/config.o: CFLAGS += -DLUMEN_DATA_DIR='"$(LUMEN_DATA_DIR)"'
$(BUILD)/obj/server/main.o: CFLAGS += -DLUMEN_CONFIG_FILE='"$(LUMEN_CONF_DIR)/slapd.conf"'
$(BUILD)/obj/config/config.o $(BUILD)/obj/server/main.o: $(BUILD)/stamp-paths

# --- installed forms of the unit and the example configuration ---------------
# The unit names the programs and files where this install puts them.
$(BUILD)/lumend.service: src/server/lumend.service $(BUILD)/stamp-paths
	sed -e 's|/usr/local/sbin/|$(sbindir)/|g' \
	    -e 's|/etc/lumen/|$(LUMEN_CONF_DIR)/|g' \
	    -e 's|/usr/local/share/doc/lumen/|$(docdir)/|g' $< > $@

# The example with its run-time files where the unit expects them
# (/var/lib/lumen, /run/lumen) and no password: the rootdn binds once
# rootpw is set (lumenpasswd prints a hash); root reaches it before that
# over ldapi:/// with SASL EXTERNAL (authz-regexp).
$(BUILD)/slapd.conf: slapd.conf.example $(BUILD)/stamp-paths
	@mkdir -p $(@D)
	{ echo '# slapd.conf — Lumen'"'"'s configuration (lumen.conf(5)), installed from'; \
	  echo '# slapd.conf.example. Check it with: lumend -T -f $(LUMEN_CONF_DIR)/slapd.conf'; \
	  echo; \
	  sed -e '1,/^$$/d' \
	      -e 's|^\(pidfile *\)\./run/|\1/run/lumen/|' \
	      -e 's|^\(argsfile *\)\./run/|\1/run/lumen/|' \
	      -e 's|^\(#logfile *\)\./run/|\1/var/log/lumen/|' \
	      -e 's|^\(directory *\)\./run/example-db|\1/var/lib/lumen|' \
	      -e 's|^rootpw .*|#rootpw          {SSHA512}...   (set one: lumenpasswd prints it)|' $<; \
	} > $@

# The pages with the version and this install's paths.
MAN_BUILT := $(addprefix $(BUILD)/man/,$(MAN_PAGES))
$(BUILD)/man/%: man/% $(BUILD)/stamp-paths $(BUILD)/stamp-version
	@mkdir -p $(@D)
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@SYSCONFDIR@|$(sysconfdir)|g' \
	    -e 's|@DATADIR@|$(datadir)|g' -e 's|@SYSTEMDUNITDIR@|$(systemdunitdir)|g' $< > $@

.PHONY: check-man
check-man:
	@./tests/build/check-man.sh $(INSTALL_SBIN) $(INSTALL_BIN)

# --- install / uninstall -------------------------------------------------------
.PHONY: install uninstall installable
# Everything install copies, built (debian/rules builds this, then installs).
installable: $(addprefix $(BUILD)/,$(INSTALL_SBIN) $(INSTALL_BIN)) \
             $(BUILD)/lumend.service $(BUILD)/slapd.conf $(MAN_BUILT)

install: installable
	$(INSTALL) -d $(DESTDIR)$(sbindir) $(DESTDIR)$(bindir) \
	  $(DESTDIR)$(LUMEN_DATA_DIR)/schema $(DESTDIR)$(LUMEN_CONF_DIR) \
	  $(DESTDIR)$(systemdunitdir) $(DESTDIR)$(docdir) \
	  $(sort $(foreach p,$(MAN_PAGES),$(DESTDIR)$(mandir)/man$(subst .,,$(suffix $(p)))))
	$(INSTALL) -m 0755 $(addprefix $(BUILD)/,$(INSTALL_SBIN)) $(DESTDIR)$(sbindir)/
	$(INSTALL) -m 0755 $(addprefix $(BUILD)/,$(INSTALL_BIN)) $(DESTDIR)$(bindir)/
	$(INSTALL) -m 0644 $(addprefix schema/,$(INSTALL_SCHEMA)) $(DESTDIR)$(LUMEN_DATA_DIR)/schema/
	$(INSTALL) -m 0644 $(BUILD)/slapd.conf $(DESTDIR)$(LUMEN_CONF_DIR)/slapd.conf.example
	@if [ -e $(DESTDIR)$(LUMEN_CONF_DIR)/slapd.conf ]; then \
	  echo "install: keeping $(DESTDIR)$(LUMEN_CONF_DIR)/slapd.conf"; \
	else \
	  echo "$(INSTALL) -m 0644 $(BUILD)/slapd.conf $(DESTDIR)$(LUMEN_CONF_DIR)/slapd.conf"; \
	  $(INSTALL) -m 0644 $(BUILD)/slapd.conf $(DESTDIR)$(LUMEN_CONF_DIR)/slapd.conf; \
	fi
	$(INSTALL) -m 0644 $(BUILD)/lumend.service $(DESTDIR)$(systemdunitdir)/lumend.service
	$(INSTALL) -m 0644 README.md $(DESTDIR)$(docdir)/README.md
	$(foreach p,$(MAN_PAGES),$(INSTALL) -m 0644 $(BUILD)/man/$(p) \
	  $(DESTDIR)$(mandir)/man$(subst .,,$(suffix $(p)))/$(p) &&) true

# Removes what install put there; slapd.conf only while it is the shipped
# one (an edited configuration stays, and is named). Directories are
# removed when empty.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(sbindir)/,$(INSTALL_SBIN)) \
	      $(addprefix $(DESTDIR)$(bindir)/,$(INSTALL_BIN)) \
	      $(addprefix $(DESTDIR)$(LUMEN_DATA_DIR)/schema/,$(INSTALL_SCHEMA)) \
	      $(DESTDIR)$(systemdunitdir)/lumend.service $(DESTDIR)$(docdir)/README.md \
	      $(foreach p,$(MAN_PAGES),$(DESTDIR)$(mandir)/man$(subst .,,$(suffix $(p)))/$(p))
	@conf=$(DESTDIR)$(LUMEN_CONF_DIR)/slapd.conf; \
	if [ -e $$conf ] && ! cmp -s $$conf $$conf.example; then \
	  echo "uninstall: keeping $$conf (changed since install)"; \
	else \
	  echo "rm -f $$conf"; rm -f $$conf; \
	fi
	rm -f $(DESTDIR)$(LUMEN_CONF_DIR)/slapd.conf.example
	-rmdir $(DESTDIR)$(LUMEN_DATA_DIR)/schema $(DESTDIR)$(LUMEN_DATA_DIR) \
	       $(DESTDIR)$(LUMEN_CONF_DIR) $(DESTDIR)$(docdir) 2>/dev/null

# --- the Debian package -----------------------------------------------------------
# dpkg-buildpackage writes its results next to the source tree, so it runs
# in a copy under $(BUILD)/deb (the tree's own build directories left out)
# and the .deb lands there, not beside the repository.
DEB_TREE := $(BUILD)/deb/lumen-$(VERSION)
.PHONY: deb
deb:
	rm -rf $(BUILD)/deb && mkdir -p $(DEB_TREE)
	tar -cf - --exclude=./.git --exclude='./build*' --exclude=./run . | tar -C $(DEB_TREE) -xf -
	cd $(DEB_TREE) && dpkg-buildpackage -us -uc -b -J$(BUILD_JOBS)
	@ls $(BUILD)/deb/*.deb
