# Test-only: build tests/tools/logs_probe (a taugate that also runs the log
# collector and serves the log routes) with the main Makefile's flags:
#   make -f Makefile -f tests/tools/logs_probe.mk [BUILD=build-san SAN=1] $(BUILD)/tests/tools/logs_probe
$(BUILD)/tests/tools/logs_probe: $(BUILD)/tests/tools/logs_probe.o $(BUILD)/libtaugate.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
-include $(BUILD)/tests/tools/logs_probe.d
