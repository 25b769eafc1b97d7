# Offline stand-in for rules_cc (bazel test --config=offline): Bazel 4's
# own tools load these names from @rules_cc; each is the native rule.
cc_binary = native.cc_binary
cc_import = native.cc_import
cc_library = native.cc_library
cc_proto_library = native.cc_proto_library
cc_test = native.cc_test
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
objc_import = native.objc_import
objc_library = native.objc_library
