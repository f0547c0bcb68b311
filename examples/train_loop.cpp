// The README's training-loop example, built and run by CTest so the README stays true.
#include <iostream>
#include <memory>

#include "ember/ember.h"

int main() {
  ember::manual_seed(0);
  ember::data::Dataset spirals = ember::data::make_spirals();  // 3 classes x 300 points
  ember::Tensor x = spirals.images.reshape({-1, 2});            // [900, 2] f32
  ember::Tensor y = spirals.labels;                             // [900] i64

  auto net = std::make_shared<ember::nn::Sequential>(ember::nn::Linear(2, 64), ember::nn::ReLU(),
                                                     ember::nn::Linear(64, 3));
  ember::optim::SGD sgd(net->parameters(), ember::optim::SgdOptions(0.5).momentum(0.9));

  for (int step = 0; step < 300; ++step) {
    ember::Tensor logits = net->forward(x);
    ember::Tensor loss = ember::cross_entropy(logits, y);
    sgd.zero_grad();
    loss.backward();
    sgd.step();
    if (step % 50 == 0)
      std::cout << "step " << step << "  loss " << loss.item<float>()
                << "  accuracy " << ember::models::accuracy(logits, y) << "\n";
  }
}
