//===- CudaLoader.cpp - load the CUDA libraries on demand
//------------------===//
//
// libcleave_rt.so never links CUDA: a machine without a GPU runs CPU bundles
// with no CUDA installed. The CUDA device (and the CUDA side of the
// in-process transport) lives in libcleave_rt_cuda.so, the NCCL communicator
// in libcleave_comm_nccl.so (NCCL is large and only GPU jobs of several
// processes need it). Each is looked for next to libcleave_rt.so first (the
// build tree and an install keep them together), then on the loader's
// default search path.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Communicator.h"
#include "cleave/rt/Device.h"
#include "cleave/rt/LocalTransport.h"
#include "cleave/rt/Runtime.h"

#include <dlfcn.h>
#include <string>

namespace cleave::rt {
namespace {

constexpr const char *cudaLibrary = "libcleave_rt_cuda.so";
constexpr const char *ncclLibrary = "libcleave_comm_nccl.so";

/// The directory holding libcleave_rt.so, with a trailing slash.
std::string runtimeDirectory() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&createCudaDevice), &info) ||
      !info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

/// Loads `library`; null with the loader's reasons in `error` when it
/// cannot.
void *loadLibrary(const char *library, std::string &error) {
  std::string nextToRuntime = runtimeDirectory() + library;
  void *handle = dlopen(nextToRuntime.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle)
    return handle;
  error = dlerror();
  handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    error += std::string("; ") + dlerror();
  return handle;
}

/// `symbol` of `library`, loading it; throws naming `who` when either is
/// missing.
void *lookUp(const char *library, const char *symbol, const std::string &who,
             const char *why) {
  std::string error;
  void *handle = loadLibrary(library, error);
  if (!handle)
    throw Error(who + ": cannot load " + library + " (" + why + "): " + error);
  void *address = dlsym(handle, symbol);
  if (!address)
    throw Error(std::string(library) + " does not define " + symbol);
  // The library stays loaded for the life of the process: the objects it
  // makes live there, and CUDA does not like being unloaded.
  return address;
}

using CreateDeviceFn = Device *(*)(int, char *, int);
using CreateTransportFn = LocalTransport *(*)(CleaveContext *, char *, int);
using DeviceCountFn = int (*)();
using CreateNcclFn = Communicator *(*)(Communicator *, int *, char *, int);

constexpr const char *withoutCuda =
    "this runtime was built without CUDA, or CUDA is not installed";

} // namespace

std::unique_ptr<Device> createCudaDevice(int index) {
  std::string who = "cuda:" + std::to_string(index);
  auto create = reinterpret_cast<CreateDeviceFn>(
      lookUp(cudaLibrary, "cleave_rt_create_cuda_device", who, withoutCuda));
  char error[1024] = {0};
  Device *device = create(index, error, sizeof(error));
  if (!device)
    throw Error(who + ": " +
                (error[0] ? std::string(error) : "cannot create the device"));
  return std::unique_ptr<Device>(device);
}

std::unique_ptr<LocalTransport> createCudaTransport(CleaveContext *ctx) {
  auto create = reinterpret_cast<CreateTransportFn>(lookUp(
      cudaLibrary, "cleave_rt_create_cuda_transport", "cuda", withoutCuda));
  char error[1024] = {0};
  LocalTransport *transport = create(ctx, error, sizeof(error));
  if (!transport)
    throw Error(error[0] ? std::string(error)
                         : "cannot create the CUDA transport");
  return std::unique_ptr<LocalTransport>(transport);
}

int visibleCudaDevices() {
  std::string error;
  void *handle = loadLibrary(cudaLibrary, error);
  if (!handle)
    return 0;
  auto count = reinterpret_cast<DeviceCountFn>(
      dlsym(handle, "cleave_rt_cuda_device_count"));
  return count ? count() : 0;
}

std::unique_ptr<Communicator>
createNcclCommunicator(std::unique_ptr<Communicator> &host, int &cudaDevice) {
  auto create = reinterpret_cast<CreateNcclFn>(
      lookUp(ncclLibrary, "cleave_rt_create_nccl_communicator", "nccl",
             "this runtime was built without NCCL; run the bundle with "
             "`cleave run --single-process`"));
  char error[1024] = {0};
  Communicator *nccl = create(host.get(), &cudaDevice, error, sizeof(error));
  if (!nccl)
    throw Error(error[0] ? std::string(error)
                         : "cannot create the NCCL communicator");
  // The NCCL communicator owns the host one from here on.
  host.release();
  return std::unique_ptr<Communicator>(nccl);
}

} // namespace cleave::rt
